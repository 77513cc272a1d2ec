// Replays pruner scenarios through the C++ pruners, for pruner_differential_test.py.
//
// stdin: JSON lines, one event each; doubles are float.hex() strings ("0x1.8p+1", "inf", "nan").
//   {"op": "study", "pruner": "median", "maximize": true, "name": "sweep-7", "median": {...}}
//       starts a new study (Study::name from "name", "" when absent) with a new pruner from
//       MakePruner; "successive_halving": {...} holds min_resource (0: auto), reduction_factor,
//       min_early_stopping_rate, bootstrap_count; "median": {...} holds n_startup_trials,
//       n_warmup_steps, interval_steps, n_min_trials; "hyperband": {...} holds min_resource,
//       max_resource (0: auto), reduction_factor, bootstrap_count.
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

#include "hpo/pruners/pruner_factory.h"

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

int Run() {
  Study study;
  std::unique_ptr<Pruner> pruner;
  std::string line;
  for (int64_t line_no = 1; std::getline(std::cin, line); ++line_no) {
    if (line.empty()) continue;
    const nlohmann::json e = nlohmann::json::parse(line);
    const std::string op = e.at("op");
    if (op == "study") {
      SweepConfig config;
      config.pruner = e.at("pruner");
      config.maximize = e.at("maximize");
      if (e.contains("median")) {
        const nlohmann::json& m = e["median"];
        config.median = {m.at("n_startup_trials"), m.at("n_warmup_steps"), m.at("interval_steps"),
                         m.at("n_min_trials")};
      }
      if (e.contains("successive_halving")) {
        const nlohmann::json& s = e["successive_halving"];
        config.successive_halving = {s.at("min_resource"), s.at("reduction_factor"),
                                     s.at("min_early_stopping_rate"), s.at("bootstrap_count")};
      }
      if (e.contains("hyperband")) {
        const nlohmann::json& h = e["hyperband"];
        config.hyperband = {h.at("min_resource"), h.at("max_resource"), h.at("reduction_factor"),
                            h.at("bootstrap_count")};
      }
      study = Study();
      study.name = e.value("name", "");
      study.maximize = config.maximize;
      pruner = MakePruner(config);
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
