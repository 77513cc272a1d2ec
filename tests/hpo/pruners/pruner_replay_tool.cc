// Replays pruner scenarios through the C++ pruners, for pruner_differential_test.py.
//
// stdin: JSON lines, one event each; doubles are float.hex() strings ("0x1.8p+1", "inf", "nan").
//   {"op": "study", "pruner": "median", "maximize": true, "name": "sweep-7", "median": {...}}
//       starts a new study (Study::name from "name", "" when absent) with a new pruner of type
//       "pruner", made from its module's spec; "successive_halving": {...} holds min_resource
//       (0: auto), reduction_factor,
//       min_early_stopping_rate, bootstrap_count; "median": {...} holds n_startup_trials,
//       n_warmup_steps, interval_steps, n_min_trials; "hyperband": {...} holds min_resource,
//       max_resource (0: auto), reduction_factor, bootstrap_count; "percentile": {...} holds
//       percentile (a JSON number) and median's four keys.
//   {"op": "create"}                                   a new RUNNING trial, numbered 0, 1, ...
//   {"op": "report", "trial": 3, "step": 7, "value": "0x1p-1"}   Optuna's trial.report (a step
//                                                      already reported is ignored, as there)
//   {"op": "prune", "trial": 3}                        Optuna's trial.should_prune()
//   {"op": "finish", "trial": 3, "state": "COMPLETE", "value": "0x1p+0"}   or PRUNED / FAIL
// stdout: for each "prune", {"line": N, "prune": bool, "system_attrs": {"completed_rung_0": hex}}
// where N is the event's 1-based line number.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hpo/pruners/hyperband_pruner.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/percentile_pruner.h"
#include "hpo/pruners/successive_halving_pruner.h"

namespace tunefleet {
namespace hpo {
namespace {

double FromHex(const nlohmann::json& j) {
  return std::strtod(j.get<std::string>().c_str(), nullptr);
}

std::string ToHex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return buf;
}

// The pruner a "study" event names, from its spec block; null for an unknown type. The specs
// are built directly, not parsed, so that combinations the YAML refuses (successive halving's
// auto min_resource with bootstrap_count, which Optuna can be made to run) are replayed too.
std::unique_ptr<Pruner> MakeReplayPruner(const nlohmann::json& e) {
  const std::string type = e.at("pruner");
  if (type == "none") return std::make_unique<NopPruner>();
  if (type == "median") {
    const nlohmann::json& m = e.at("median");
    return std::make_unique<MedianPruner>(MedianSpec{m.at("n_startup_trials"),
                                                     m.at("n_warmup_steps"), m.at("interval_steps"),
                                                     m.at("n_min_trials")});
  }
  if (type == "percentile") {
    const nlohmann::json& p = e.at("percentile");
    return std::make_unique<PercentilePruner>(
        PercentileSpec{p.at("percentile").get<double>(), p.at("n_startup_trials"),
                       p.at("n_warmup_steps"), p.at("interval_steps"), p.at("n_min_trials")});
  }
  if (type == "successive_halving") {
    const nlohmann::json& s = e.at("successive_halving");
    return std::make_unique<SuccessiveHalvingPruner>(
        SuccessiveHalvingSpec{s.at("min_resource"), s.at("reduction_factor"),
                              s.at("min_early_stopping_rate"), s.at("bootstrap_count")});
  }
  if (type == "hyperband") {
    const nlohmann::json& h = e.at("hyperband");
    return std::make_unique<HyperbandPruner>(
        HyperbandSpec{h.at("min_resource"), h.at("max_resource"), h.at("reduction_factor"),
                      h.at("bootstrap_count")});
  }
  return nullptr;
}

int Run() {
  Study study;
  std::unique_ptr<Pruner> pruner;
  std::string line;
  for (int64_t line_no = 1; std::getline(std::cin, line); ++line_no) {
    if (line.empty()) continue;
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string op = e.at("op");
    if (op == "study") {
      study = Study();
      study.name = e.value("name", "");
      study.maximize = e.at("maximize");
      pruner = MakeReplayPruner(e);
      if (!pruner) {
        std::cerr << "line " << line_no << ": unknown pruner\n";
        return 1;
      }
    } else if (op == "create") {
      Trial t;
      t.number = static_cast<int64_t>(study.trials.size());
      study.trials.push_back(t);
    } else if (op == "report") {
      Trial& t = study.trials.at(e.at("trial").get<size_t>());
      t.intermediate_values.emplace(e.at("step").get<int64_t>(), FromHex(e.at("value")));
    } else if (op == "prune") {
      const size_t index = e.at("trial");
      const bool prune = pruner->Prune(&study, index);
      nlohmann::json attrs = nlohmann::json::object();
      for (const auto& [key, value] : study.trials.at(index).system_attrs)
        attrs[key] = ToHex(value);
      nlohmann::json out = {{"line", line_no}, {"prune", prune}, {"system_attrs", attrs}};
      std::cout << out.dump() << "\n";
    } else if (op == "finish") {
      Trial& t = study.trials.at(e.at("trial").get<size_t>());
      const std::string state = e.at("state");
      if (state == "COMPLETE") {
        t.state = TrialState::kComplete;
        t.value = FromHex(e.at("value"));
      } else if (state == "PRUNED") {
        t.state = TrialState::kPruned;
      } else if (state == "FAIL") {
        t.state = TrialState::kFail;
      } else {
        std::cerr << "line " << line_no << ": bad state " << state << "\n";
        return 1;
      }
    } else {
      std::cerr << "line " << line_no << ": bad op " << op << "\n";
      return 1;
    }
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet

int main() { return tunefleet::hpo::Run(); }
