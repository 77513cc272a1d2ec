#include "hpo/sweep_config.h"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/train_config.h"

namespace tunefleet {
namespace hpo {
namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return name != "." && name != "..";
}

absl::Status AtLeast(const ConfigMap& m, const std::string& key, int64_t value, int64_t low) {
  if (value < low) return m.Error(key, absl::StrCat("must be >= ", low, ", got ", value));
  return absl::OkStatus();
}

absl::Status ParseMetric(const ConfigMap& m, SweepConfig* c) {
  RETURN_IF_ERROR(m.AllowOnly({"name", "goal"}));
  RETURN_IF_ERROR(m.Get("name", &c->metric_name));
  if (c->metric_name.empty()) return m.Error("name", "must not be empty");
  std::string goal = "maximize";
  RETURN_IF_ERROR(m.GetEnum("goal", {"maximize", "minimize"}, &goal));
  c->maximize = goal == "maximize";
  return absl::OkStatus();
}

absl::Status ParseTrainer(const ConfigMap& m, TrainerSpec* t) {
  RETURN_IF_ERROR(m.AllowOnly({"config", "overrides", "synthetic"}));
  const bool has_config = m.Has("config");
  const bool has_synthetic = m.Has("synthetic");
  if (has_config == has_synthetic) {
    return m.Error("", "give exactly one of 'config' (a trainer YAML) or 'synthetic'");
  }
  if (has_synthetic) {
    if (m.Has("overrides")) return m.Error("overrides", "only applies to a trainer config");
    t->synthetic = true;
    ASSIGN_OR_RETURN(ConfigMap s, m.GetOptionalMap("synthetic"));
    RETURN_IF_ERROR(s.AllowOnly({"steps", "seconds_per_step", "noise", "seed"}));
    SyntheticSpec& spec = t->synthetic_spec;
    RETURN_IF_ERROR(s.GetOptional("steps", &spec.steps));
    RETURN_IF_ERROR(AtLeast(s, "steps", spec.steps, 0));
    RETURN_IF_ERROR(s.GetOptional("seconds_per_step", &spec.seconds_per_step));
    if (spec.seconds_per_step < 0 || spec.seconds_per_step > 3600) {
      return s.Error("seconds_per_step",
                     absl::StrCat("must be in [0, 3600], got ", spec.seconds_per_step));
    }
    RETURN_IF_ERROR(s.GetOptional("noise", &spec.noise));
    if (spec.noise < 0) return s.Error("noise", absl::StrCat("must be >= 0, got ", spec.noise));
    RETURN_IF_ERROR(s.GetOptional("seed", &spec.seed));
    RETURN_IF_ERROR(AtLeast(s, "seed", spec.seed, 0));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(m.Get("config", &t->config));
  if (t->config.empty()) return m.Error("config", "must name a trainer YAML file");
  ASSIGN_OR_RETURN(ConfigMap overrides, m.GetOptionalMap("overrides"));
  for (const std::string& key : overrides.Keys()) {
    std::string text;
    RETURN_IF_ERROR(overrides.GetYamlText(key, &text));
    t->overrides.push_back(key + "=" + text);
  }
  RETURN_IF_ERROR(overrides.AllowOnly(overrides.Keys()));  // duplicates
  return absl::OkStatus();
}

absl::Status ParseParameters(const ConfigMap& m, SweepConfig* c) {
  RETURN_IF_ERROR(m.AllowOnly({"lr", "batch_size"}));
  ASSIGN_OR_RETURN(ConfigMap lr, m.GetMap("lr"));
  RETURN_IF_ERROR(lr.AllowOnly({"distribution", "min", "max", "values"}));
  if (lr.Has("values")) {
    if (lr.Has("distribution") || lr.Has("min") || lr.Has("max")) {
      return lr.Error("values", "give either values or distribution/min/max, not both");
    }
    c->lr.distribution = "categorical";
    RETURN_IF_ERROR(lr.Get("values", &c->lr.values));
    if (c->lr.values.empty()) return lr.Error("values", "must list at least one learning rate");
    for (size_t i = 0; i < c->lr.values.size(); ++i) {
      if (c->lr.values[i] <= 0) {
        return lr.Error("values", absl::StrCat("learning rates must be > 0, got ", c->lr.values[i]));
      }
    }
    std::sort(c->lr.values.begin(), c->lr.values.end());
    c->lr.values.erase(std::unique(c->lr.values.begin(), c->lr.values.end()), c->lr.values.end());
    c->lr.min = c->lr.values.front();
    c->lr.max = c->lr.values.back();
  } else {
    RETURN_IF_ERROR(lr.GetEnum("distribution", {"log_uniform", "uniform"}, &c->lr.distribution,
                               /*required=*/true));
    RETURN_IF_ERROR(lr.Get("min", &c->lr.min));
    RETURN_IF_ERROR(lr.Get("max", &c->lr.max));
    if (c->lr.distribution == "log_uniform" && c->lr.min <= 0) {
      return lr.Error("min", absl::StrCat("must be > 0 for log_uniform, got ", c->lr.min));
    }
    if (c->lr.min < 0) return lr.Error("min", absl::StrCat("must be >= 0, got ", c->lr.min));
    if (c->lr.min >= c->lr.max) {
      return lr.Error("max", absl::StrCat("must be greater than min (", c->lr.min, "), got ",
                                          c->lr.max));
    }
  }
  ASSIGN_OR_RETURN(ConfigMap batch, m.GetMap("batch_size"));
  RETURN_IF_ERROR(batch.AllowOnly({"values"}));
  RETURN_IF_ERROR(batch.Get("values", &c->batch_sizes));
  if (c->batch_sizes.empty()) return batch.Error("values", "must list at least one batch size");
  std::set<int64_t> seen;
  for (size_t i = 0; i < c->batch_sizes.size(); ++i) {
    const int64_t b = c->batch_sizes[i];
    if (b < 1) return batch.Error("values", absl::StrCat("batch sizes must be positive, got ", b));
    if (!seen.insert(b).second) {
      return batch.Error("values", absl::StrCat("batch size ", b, " is listed twice"));
    }
  }
  std::sort(c->batch_sizes.begin(), c->batch_sizes.end());
  return absl::OkStatus();
}

absl::Status ParseSearch(const ConfigMap& m, SweepConfig* c) {
  RETURN_IF_ERROR(m.AllowOnly({"method", "random", "grid"}));
  RETURN_IF_ERROR(m.GetEnum("method", {"random", "grid", "random_then_grid"}, &c->method));
  ASSIGN_OR_RETURN(ConfigMap random, m.GetOptionalMap("random"));
  RETURN_IF_ERROR(random.AllowOnly({"trials", "seed"}));
  RETURN_IF_ERROR(random.GetOptional("trials", &c->random.trials));
  RETURN_IF_ERROR(AtLeast(random, "trials", c->random.trials, 1));
  RETURN_IF_ERROR(random.GetOptional("seed", &c->random.seed));
  RETURN_IF_ERROR(AtLeast(random, "seed", c->random.seed, 0));
  ASSIGN_OR_RETURN(ConfigMap grid, m.GetOptionalMap("grid"));
  RETURN_IF_ERROR(grid.AllowOnly({"top_k", "lr_points", "lr_span", "batch_neighbors"}));
  RETURN_IF_ERROR(grid.GetOptional("top_k", &c->grid.top_k));
  RETURN_IF_ERROR(AtLeast(grid, "top_k", c->grid.top_k, 1));
  RETURN_IF_ERROR(grid.GetOptional("lr_points", &c->grid.lr_points));
  RETURN_IF_ERROR(AtLeast(grid, "lr_points", c->grid.lr_points, 1));
  RETURN_IF_ERROR(grid.GetOptional("lr_span", &c->grid.lr_span));
  if (c->grid.lr_span < 1.0) {
    return grid.Error("lr_span", absl::StrCat("must be >= 1 (the ratio of the largest to the "
                                              "smallest grid lr), got ", c->grid.lr_span));
  }
  RETURN_IF_ERROR(grid.GetOptional("batch_neighbors", &c->grid.batch_neighbors));
  RETURN_IF_ERROR(AtLeast(grid, "batch_neighbors", c->grid.batch_neighbors, 0));
  if (c->method == "random_then_grid" && c->grid.top_k > c->random.trials) {
    return grid.Error("top_k", absl::StrCat("is ", c->grid.top_k, " but the random phase runs only ",
                                            c->random.trials, " trials"));
  }
  return absl::OkStatus();
}

absl::Status ParseEarlyTerminate(const ConfigMap& m, SweepConfig* c) {
  RETURN_IF_ERROR(m.GetEnum("type", {"none", "median", "successive_halving"}, &c->pruner,
                            /*required=*/true));
  if (c->pruner == "none") return m.AllowOnly({"type"});
  if (c->pruner == "median") {
    RETURN_IF_ERROR(
        m.AllowOnly({"type", "n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"}));
    MedianSpec& s = c->median;
    RETURN_IF_ERROR(m.GetOptional("n_startup_trials", &s.n_startup_trials));
    RETURN_IF_ERROR(AtLeast(m, "n_startup_trials", s.n_startup_trials, 0));
    RETURN_IF_ERROR(m.GetOptional("n_warmup_steps", &s.n_warmup_steps));
    RETURN_IF_ERROR(AtLeast(m, "n_warmup_steps", s.n_warmup_steps, 0));
    RETURN_IF_ERROR(m.GetOptional("interval_steps", &s.interval_steps));
    RETURN_IF_ERROR(AtLeast(m, "interval_steps", s.interval_steps, 1));
    RETURN_IF_ERROR(m.GetOptional("n_min_trials", &s.n_min_trials));
    RETURN_IF_ERROR(AtLeast(m, "n_min_trials", s.n_min_trials, 1));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(m.AllowOnly(
      {"type", "min_resource", "reduction_factor", "min_early_stopping_rate", "bootstrap_count"}));
  SuccessiveHalvingSpec& s = c->successive_halving;
  std::string text;
  if (m.Has("min_resource")) {
    RETURN_IF_ERROR(m.GetYamlText("min_resource", &text));
    if (text != "auto") {
      RETURN_IF_ERROR(m.Get("min_resource", &s.min_resource));
      RETURN_IF_ERROR(AtLeast(m, "min_resource", s.min_resource, 1));
    }
  }
  RETURN_IF_ERROR(m.GetOptional("reduction_factor", &s.reduction_factor));
  RETURN_IF_ERROR(AtLeast(m, "reduction_factor", s.reduction_factor, 2));
  RETURN_IF_ERROR(m.GetOptional("min_early_stopping_rate", &s.min_early_stopping_rate));
  RETURN_IF_ERROR(AtLeast(m, "min_early_stopping_rate", s.min_early_stopping_rate, 0));
  RETURN_IF_ERROR(m.GetOptional("bootstrap_count", &s.bootstrap_count));
  RETURN_IF_ERROR(AtLeast(m, "bootstrap_count", s.bootstrap_count, 0));
  if (s.bootstrap_count > 0 && s.min_resource == 0) {
    // Optuna refuses this combination too (SuccessiveHalvingPruner raises ValueError).
    return m.Error("bootstrap_count", "needs an explicit min_resource (not auto)");
  }
  return absl::OkStatus();
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

absl::StatusOr<SweepConfig> ParseSweepConfig(const ConfigFile& file) {
  ASSIGN_OR_RETURN(ConfigMap root, file.Root());
  RETURN_IF_ERROR(root.AllowOnly({"name", "metric", "trainer", "resources", "parameters",
                                  "lr_scaling", "search", "early_terminate",
                                  "max_concurrent_trials", "max_failures_per_trial", "journal"}));
  SweepConfig c;
  c.source = file.name();
  RETURN_IF_ERROR(root.Get("name", &c.name));
  if (!ValidName(c.name)) {
    return root.Error("name", "must be 1-128 letters, digits, '-', '_' or '.'");
  }
  ASSIGN_OR_RETURN(ConfigMap metric, root.GetMap("metric"));
  RETURN_IF_ERROR(ParseMetric(metric, &c));
  ASSIGN_OR_RETURN(ConfigMap trainer, root.GetMap("trainer"));
  RETURN_IF_ERROR(ParseTrainer(trainer, &c.trainer));
  ASSIGN_OR_RETURN(ConfigMap resources, root.GetOptionalMap("resources"));
  RETURN_IF_ERROR(resources.AllowOnly({"gpus_per_trial", "stage", "fetch_back"}));
  RETURN_IF_ERROR(resources.GetOptional("fetch_back", &c.fetch_back));
  RETURN_IF_ERROR(resources.GetOptional("gpus_per_trial", &c.gpus_per_trial));
  if (resources.Has("stage")) {
    RETURN_IF_ERROR(resources.Get("stage", &c.stage));
    for (const std::string& path : c.stage) {
      if (path.empty()) return resources.Error("stage", "holds an empty path");
    }
  }
  RETURN_IF_ERROR(AtLeast(resources, "gpus_per_trial", c.gpus_per_trial, 1));
  ASSIGN_OR_RETURN(ConfigMap parameters, root.GetMap("parameters"));
  RETURN_IF_ERROR(ParseParameters(parameters, &c));
  ASSIGN_OR_RETURN(ConfigMap scaling, root.GetOptionalMap("lr_scaling"));
  RETURN_IF_ERROR(scaling.AllowOnly({"rule", "base_batch"}));
  RETURN_IF_ERROR(scaling.GetEnum("rule", {"linear", "none"}, &c.lr_scaling.rule));
  RETURN_IF_ERROR(scaling.GetOptional("base_batch", &c.lr_scaling.base_batch));
  RETURN_IF_ERROR(AtLeast(scaling, "base_batch", c.lr_scaling.base_batch, 1));
  ASSIGN_OR_RETURN(ConfigMap search, root.GetOptionalMap("search"));
  RETURN_IF_ERROR(ParseSearch(search, &c));
  if (root.Has("early_terminate")) {
    ASSIGN_OR_RETURN(ConfigMap early, root.GetMap("early_terminate"));
    RETURN_IF_ERROR(ParseEarlyTerminate(early, &c));
  }
  RETURN_IF_ERROR(root.GetOptional("max_concurrent_trials", &c.max_concurrent_trials));
  RETURN_IF_ERROR(AtLeast(root, "max_concurrent_trials", c.max_concurrent_trials, 1));
  RETURN_IF_ERROR(root.GetOptional("max_failures_per_trial", &c.max_failures_per_trial));
  RETURN_IF_ERROR(AtLeast(root, "max_failures_per_trial", c.max_failures_per_trial, 0));
  c.journal = "runs/" + c.name + "/journal.log";
  RETURN_IF_ERROR(root.GetOptional("journal", &c.journal));
  if (c.journal.empty()) return root.Error("journal", "must not be empty");
  return c;
}

absl::StatusOr<SweepConfig> LoadSweepConfig(const std::string& path,
                                            const std::vector<std::string>& overrides) {
  ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
  RETURN_IF_ERROR(file.ApplyOverrides(overrides));
  ASSIGN_OR_RETURN(SweepConfig config, ParseSweepConfig(file));
  if (!config.trainer.synthetic) {
    std::string trainer_path = config.trainer.config;
    if (!FileExists(trainer_path) && trainer_path[0] != '/') {
      const size_t slash = path.rfind('/');
      const std::string beside =
          (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + trainer_path;
      if (FileExists(beside)) trainer_path = beside;
    }
    auto trainer = trainer::LoadTrainerConfig(trainer_path, config.trainer.overrides);
    if (!trainer.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": trainer.config: ", trainer.status().message()));
    }
    config.trainer.config = trainer_path;
    config.trainer.grad_accum = trainer->train.grad_accum;
  }
  // Staged paths: absolute, relative to the working directory, or beside the sweep file.
  for (std::string& stage : config.stage) {
    std::string found = stage;
    if (stage[0] != '/') {
      const size_t slash = path.rfind('/');
      const std::string beside = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + stage;
      found = PathExists(stage) ? stage : beside;
      if (found[0] != '/') {
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof(cwd)) != nullptr) found = absl::StrCat(cwd, "/", found);
      }
    }
    if (!PathExists(found)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": resources.stage: ", stage, ": no such file or folder"));
    }
    stage = found;
  }
  return config;
}

}  // namespace hpo
}  // namespace tunefleet
