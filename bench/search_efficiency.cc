// search_efficiency: how much of a full grid's compute each search method spends to come within
// EPS of the grid's best, replayed on a table of recorded learning curves (bench/search_table.h)
// with tunefleet's own sweep engine and with Optuna 3.1 (bench/sweep_replay.h,
// bench/optuna_policy.h).
//
//   search_efficiency --table JOURNAL --sweep SWEEP.yaml [--seeds 20] [--within 0.005]
//                     [--methods LABEL,...] [key=value ...]  (overrides of the sweep file)
//
// Methods: each search.method of the sampler registry (random, grid, random_then_grid, ...), each
// with each pruner of the pruner registry that the sweep configures or that has defaults for
// all its keys (none, median, successive_halving, hyperband; "tunefleet:METHOD+PRUNER");
// Optuna's TPESampler and RandomSampler with each of those pruners that prunes
// ("optuna:tpe+median", ...). A new sampler or pruner shows up here without an edit. A
// pruner's settings are the sweep's when it uses that pruner, else its defaults, the same for
// both; hyperband's min_resource "auto" is one evaluation
// interval of the table's epoch. Seed s sets search.random.seed and Optuna's sampler seed.
// Optuna's TPESampler takes search.tpe's settings (multivariate, gamma, ...; defaults: its own).
// Every method may spend at most the full grid's compute; a method whose plan ends before
// (grid, random_then_grid) stops there.
//
// One JSON line per method:
//   {"method", "seeds", "median_fraction_to_within", "p90_fraction_to_within",
//    "median_best_at_35pct", "never_within", "configured", "mean_trials", "mean_pruned",
//    "median_fraction_spent"}
// fraction_to_within: the compute spent when the best completed trial first comes within EPS of
// the table's best, over the grid's compute (1.0 when never: counted in never_within);
// best_at_35pct: the best final value found with 35% of the grid's compute (null if none);
// fraction_spent: the compute of the whole sweep (to its end, or to the grid's compute) over the
// grid's; percentiles as numpy's default (linear); "configured": the sweep's own method and
// pruner.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/optuna_policy.h"
#include "bench/search_table.h"
#include "bench/sweep_replay.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_config.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/pruner_registry.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler_registry.h"
#include "hpo/samplers/tpe_sampler.h"
#include "hpo/search_space.h"
#include "hpo/sweep_engine.h"

namespace tunefleet {
namespace bench {
namespace {

constexpr char kProgram[] = "search_efficiency";
constexpr double kAt = 0.35;  // best_at_35pct

struct Method {
  std::string label;  // "tunefleet:random+median", "optuna:tpe+hyperband"
  bool optuna = false;
  std::string search;  // a search.method (tunefleet) or tpe | random (optuna)
  std::string pruner;  // an early_terminate.type
};

// Every sampler of the registry (hpo/samplers/all_samplers.h) with every pruner of its registry
// (hpo/pruners/all_pruners.h) that can run here: the sweep's, or one whose keys all have
// defaults; then Optuna's TPE and random samplers with each of those pruners that prunes.
std::vector<Method> AllMethods(const hpo::SweepConfig& sweep) {
  std::vector<std::string> pruners, pruning;
  for (const std::string& type : hpo::PrunerTypes()) {
    absl::StatusOr<hpo::PrunerSettingsPtr> settings = sweep.pruner;
    if (type != sweep.pruner->type()) settings = hpo::DefaultPrunerSettings(type);
    if (!settings.ok()) continue;
    pruners.push_back(type);
    if ((*settings)->prunes()) pruning.push_back(type);
  }
  std::vector<Method> out;
  for (const std::string& search : hpo::SamplerMethods()) {
    for (const std::string& pruner : pruners) {
      out.push_back({absl::StrCat("tunefleet:", search, "+", pruner), false, search, pruner});
    }
  }
  for (const char* sampler : {"tpe", "random"}) {
    for (const std::string& pruner : pruning) {
      out.push_back({absl::StrCat("optuna:", sampler, "+", pruner), true, sampler, pruner});
    }
  }
  return out;
}

// The sweep with `method`'s search and pruner, for seed `seed`; a pruner the sweep does not
// configure gets its defaults, resolved with `interval` samples an evaluation.
absl::StatusOr<hpo::SweepConfig> Variant(const hpo::SweepConfig& base, const Method& m,
                                         int64_t seed, int64_t interval) {
  hpo::SweepConfig c = base;
  if (m.pruner != base.pruner->type()) {
    ASSIGN_OR_RETURN(c.pruner, hpo::DefaultPrunerSettings(m.pruner));
    ASSIGN_OR_RETURN(c.pruner, c.pruner->Resolve({interval}, base.source));
  }
  hpo::MutableRandomSpec(&c).seed = seed;
  if (!m.optuna) {
    c.method = m.search;
    // A plan of random points only is bounded by the compute, not by random.trials.
    const hpo::SamplerKind& kind = hpo::SamplerKindOf(c);
    if (kind.random_points(c) == kind.max_planned_trials(c)) {
      hpo::MutableRandomSpec(&c).trials = 1 << 20;
    }
  }
  return c;
}

std::string Number(std::optional<double> v) {
  if (!v.has_value() || !std::isfinite(*v)) return "null";
  return nlohmann::json(*v).dump();
}

struct Outcome {
  std::string trace;  // --trace: the seed's trials, one line each (tunefleet methods only)
  double fraction = 1;
  bool within = false;
  std::optional<double> best_at;
  double spent = 0;  // the compute of the whole sweep, over the grid's
  int64_t trials = 0, pruned = 0;
};

// search.tpe as TPESampler's keyword arguments, so that optuna:tpe runs with the settings
// tunefleet:tpe runs with (search.tpe.trials bounds tunefleet's sweep only).
std::string OptunaTpeSettings(const hpo::TpeSpec& t) {
  return nlohmann::json{{"n_startup_trials", t.n_startup_trials},
                        {"n_ei_candidates", t.n_ei_candidates},
                        {"gamma", t.gamma},
                        {"prior_weight", t.prior_weight},
                        {"consider_prior", t.consider_prior},
                        {"consider_magic_clip", t.consider_magic_clip},
                        {"consider_endpoints", t.consider_endpoints},
                        {"multivariate", t.multivariate}}
      .dump();
}

absl::StatusOr<Outcome> RunOnce(const SearchTable& table, const hpo::SweepConfig& config,
                                const Method& m, int64_t seed, double eps,
                                const std::string& python, const std::string& script) {
  ReplayOptions o;
  o.max_concurrent_trials = config.max_concurrent_trials;
  o.evals_per_epoch = config.trainer.synthetic ? config.trainer.synthetic_spec.steps
                                               : config.trainer.evals_per_epoch;
  o.compute_limit = table.compute();
  std::unique_ptr<Policy> policy;
  if (m.optuna) {
    OptunaPolicy::Options po;
    po.python = python;
    po.script = script;
    po.sampler = m.search;
    po.tpe_json = OptunaTpeSettings(hpo::TpeSpecOf(config));
    po.seed = static_cast<uint64_t>(seed);
    po.study_name = config.name;
    po.maximize = config.maximize;
    const hpo::SweepEngine engine(config, nullptr);  // the space and the resolved pruner
    po.pruner_json = engine.StudyUserAttrs().at("pruner");
    po.space = engine.space();
    ASSIGN_OR_RETURN(policy, OptunaPolicy::Launch(po));
  } else {
    policy = std::make_unique<TunefleetPolicy>(config);
  }
  ASSIGN_OR_RETURN(ReplayTrace trace, Replay(table, *policy, o));
  Outcome out;
  const std::optional<int64_t> to = trace.ComputeToWithin(table.best(), eps, table.maximize());
  out.within = to.has_value() && *to <= table.compute();
  out.fraction = out.within ? static_cast<double>(*to) / static_cast<double>(table.compute()) : 1;
  out.best_at = trace.BestAt(static_cast<int64_t>(kAt * static_cast<double>(table.compute())));
  out.spent = static_cast<double>(trace.compute) / static_cast<double>(table.compute());
  out.trials = trace.trials;
  out.pruned = trace.pruned;
  if (const auto* tf = dynamic_cast<const TunefleetPolicy*>(policy.get())) {
    for (const hpo::Trial& t : tf->engine().study().trials) {
      const std::vector<double> curve = table.Answer(t.params, {table.max_total()});
      absl::StrAppend(&out.trace, "  #", t.number, " ", t.phase, " point ", t.point, " lr ",
                      t.params.at(hpo::kLrParam), " batch ", t.params.at(hpo::kBatchParam), " ",
                      hpo::TrialStateName(t.state), " value ",
                      t.value.has_value() ? absl::StrCat(*t.value) : "-", " last ",
                      t.intermediate_values.empty() ? 0 : t.intermediate_values.rbegin()->first,
                      " final ", curve.back());
      for (const auto& [name, value] : t.params) {  // the other parameters, if any
        if (name != hpo::kLrParam && name != hpo::kBatchParam) {
          absl::StrAppend(&out.trace, " ", name, " ", value);
        }
      }
      absl::StrAppend(&out.trace, "\n");
    }
  }
  return out;
}

// --trace: the table's final values, one lr a line, batch sizes across.
std::string TableLines(const SearchTable& table) {
  std::map<double, std::map<double, double>> by_lr;
  for (const SearchTable::Point& p : table.points()) {
    by_lr[p.params.at(hpo::kLrParam)][p.params.at(hpo::kBatchParam)] = p.values.back();
  }
  std::string out;
  for (const auto& [lr, row] : by_lr) {
    absl::StrAppend(&out, "  lr ", absl::StrFormat("%-10.4g", lr));
    for (const auto& [batch, v] : row) {
      absl::StrAppend(
          &out, absl::StrFormat(" %4g:%.4f%s", batch, v, v >= table.best() - 0.005 ? "*" : " "));
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

// The command line.
struct Options {
  std::string table_path, sweep_path, methods_arg, python = "/usr/bin/python3", script;
  int64_t seeds = 20, epoch_samples = 0;
  bool trace = false;
  double within = 0.005;
  std::vector<std::string> overrides;  // key=value arguments, of the sweep file
};

// What the methods replay on, loaded and checked.
struct Inputs {
  hpo::SweepConfig sweep;
  SearchTable table;
  std::vector<Method> methods;  // those to replay
  int64_t eval_interval = 1;    // samples an evaluation, for the pruners' defaults
};

// The seeds' outcomes of one method, gathered.
struct Tally {
  std::vector<double> fractions, best_at, spent;
  int64_t never = 0, trials = 0, pruned = 0, missing = 0;
};

// Reads the command line into `o`: an exit code when the bench ends here (--help, a bad flag),
// else -1.
int ParseOptions(int argc, char** argv, Options& o) {
  CommandLine cli(kProgram, "[key=value ...]",
                  "Replays search methods on a table of recorded learning curves (a full-grid\n"
                  "sweep's journal) and prints, per method, the share of the grid's compute it\n"
                  "spends to come within EPS of the grid's best (one JSON line each).");
  cli.AddString("table", &o.table_path, "journal of a full-grid sweep (required)", "JOURNAL");
  cli.AddString("sweep", &o.sweep_path,
                "the sweep whose space, search and pruner to replay (required)", "SWEEP.yaml");
  cli.AddInt("seeds", &o.seeds, "seeds per method (search.random.seed, Optuna's sampler seed)");
  cli.AddDouble("within", &o.within, "how close to the table's best counts as found");
  cli.AddString("methods", &o.methods_arg, "only these methods, comma-separated labels", "LIST");
  cli.AddInt("epoch_samples", &o.epoch_samples,
             "samples of one epoch, for a table keyed by optimizer steps (an older journal)");
  cli.AddBool("trace", &o.trace,
              "print the table and, per tunefleet seed, its trials to stderr ('*': within EPS)");
  cli.AddString("python", &o.python, "the python3 with optuna 3.1", "PATH");
  cli.AddString("optuna_script", &o.script,
                "bench/optuna_policy.py (default: found beside this "
                "binary)",
                "PATH");
  cli.AllowOverrides();  // key=value arguments override the sweep file
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::Status parsed = cli.Parse(args);
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (parsed.ok() && (o.table_path.empty() || o.sweep_path.empty())) {
    parsed = absl::InvalidArgumentError("--table and --sweep are required");
  }
  if (parsed.ok() && (o.seeds < 1 || !(o.within >= 0))) {
    parsed = absl::InvalidArgumentError("--seeds must be >= 1 and --within >= 0");
  }
  if (!parsed.ok()) {
    PrintError(kProgram, parsed);
    return kExitUsage;
  }
  o.overrides = cli.overrides();
  return -1;
}

// --methods: those of `methods` it names, in its order; every label must be known.
absl::StatusOr<std::vector<Method>> ChooseMethods(const std::vector<Method>& methods,
                                                  const std::string& methods_arg) {
  if (methods_arg.empty()) return methods;
  std::vector<Method> chosen;
  for (absl::string_view label : absl::StrSplit(methods_arg, ',')) {
    bool known = false;
    for (const Method& m : methods) {
      if (m.label == label) {
        chosen.push_back(m);
        known = true;
      }
    }
    if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown method ", label));
  }
  return chosen;
}

// The sweep, the table and the methods (every error a usage error); finds the Optuna script
// when --optuna_script is not given.
absl::StatusOr<Inputs> Load(Options& o) {
  ASSIGN_OR_RETURN(hpo::SweepConfig sweep, hpo::LoadSweepConfig(o.sweep_path, o.overrides));
  TableOptions to;
  to.epoch_samples = o.epoch_samples;
  to.ranks = sweep.gpus_per_trial;
  to.grad_accum = sweep.trainer.grad_accum;
  ASSIGN_OR_RETURN(SearchTable table, SearchTable::Load(o.table_path, to));
  if (table.maximize() != sweep.maximize) {
    return absl::InvalidArgumentError("the table and the sweep have other goals");
  }
  if (o.script.empty()) {
    auto found = FindSiblingBinary("bench/optuna_policy.py");
    o.script = found.ok() ? *found : "bench/optuna_policy.py";
  }
  ASSIGN_OR_RETURN(std::vector<Method> methods, ChooseMethods(AllMethods(sweep), o.methods_arg));
  const int64_t evals =
      sweep.trainer.synthetic ? sweep.trainer.synthetic_spec.steps : sweep.trainer.evals_per_epoch;
  const int64_t eval_interval = std::max<int64_t>(
      1, std::llround(static_cast<double>(table.max_total()) / static_cast<double>(evals)));
  return Inputs{std::move(sweep), std::move(table), std::move(methods), eval_interval};
}

// Method `m`'s JSON line on stdout.
void PrintMethod(const Inputs& in, const Method& m, int64_t seeds, const Tally& t) {
  const bool configured =
      !m.optuna && m.search == in.sweep.method && m.pruner == in.sweep.pruner->type();
  // A median over seeds, most of which found nothing by then, is not a value.
  std::optional<double> best_median;
  if (2 * t.missing < seeds) best_median = hpo::NanPercentile(t.best_at, 50);
  std::cout << "{\"method\": \"" << m.label << "\", \"seeds\": " << seeds
            << ", \"median_fraction_to_within\": " << Number(hpo::NanPercentile(t.fractions, 50))
            << ", \"p90_fraction_to_within\": " << Number(hpo::NanPercentile(t.fractions, 90))
            << ", \"median_best_at_35pct\": " << Number(best_median)
            << ", \"never_within\": " << t.never
            << ", \"configured\": " << (configured ? "true" : "false")
            << ", \"mean_trials\": " << Number(static_cast<double>(t.trials) / seeds)
            << ", \"mean_pruned\": " << Number(static_cast<double>(t.pruned) / seeds)
            << ", \"median_fraction_spent\": " << Number(hpo::NanPercentile(t.spent, 50)) << "}"
            << std::endl;
}

// Replays method `m` for every seed and prints its line; an error names the method and seed.
absl::Status RunMethod(const Options& o, const Inputs& in, const Method& m) {
  const auto start = std::chrono::steady_clock::now();
  Tally t;
  for (int64_t seed = 0; seed < o.seeds; ++seed) {
    absl::StatusOr<hpo::SweepConfig> config = Variant(in.sweep, m, seed, in.eval_interval);
    absl::StatusOr<Outcome> outcome =
        config.ok() ? RunOnce(in.table, *config, m, seed, o.within, o.python, o.script)
                    : config.status();
    if (!outcome.ok()) {
      return absl::Status(outcome.status().code(),
                          absl::StrCat(m.label, " seed ", seed, ": ", outcome.status().message()));
    }
    if (o.trace && !outcome->trace.empty()) {
      std::cerr << m.label << " seed " << seed << ": "
                << (outcome->within ? absl::StrCat("within at ", outcome->fraction) : "NEVER")
                << "\n"
                << outcome->trace;
    }
    t.fractions.push_back(outcome->fraction);
    t.spent.push_back(outcome->spent);
    t.never += outcome->within ? 0 : 1;
    const double worst = in.table.maximize() ? -std::numeric_limits<double>::infinity()
                                             : std::numeric_limits<double>::infinity();
    t.best_at.push_back(outcome->best_at.value_or(worst));
    t.missing += outcome->best_at.has_value() ? 0 : 1;
    t.trials += outcome->trials;
    t.pruned += outcome->pruned;
  }
  PrintMethod(in, m, o.seeds, t);
  std::cerr << kProgram << ": " << m.label << ": " << o.seeds << " seeds in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);  // a dead Optuna process is an error, not a signal
  Options o;
  if (const int exit_code = ParseOptions(argc, argv, o); exit_code >= 0) return exit_code;
  absl::StatusOr<Inputs> in = Load(o);
  if (!in.ok()) {
    PrintError(kProgram, in.status());
    return kExitUsage;
  }
  const SearchTable& table = in->table;
  std::cerr << kProgram << ": table " << o.table_path << ": " << table.points().size()
            << " points, best " << table.best() << ", grid compute " << table.compute()
            << " samples" << (table.keyed_by_steps() ? " (converted from optimizer steps)" : "")
            << "\n";
  if (o.trace) std::cerr << TableLines(table);
  for (const Method& m : in->methods) {
    if (absl::Status s = RunMethod(o, *in, m); !s.ok()) {
      PrintError(kProgram, s);
      return 1;
    }
  }
  return kExitOk;
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain(/*role=*/"", tunefleet::bench::Main, argc, argv);
}
