#include "hpo/config/sweep_config.h"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <set>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/file_util.h"
#include "common/name_chars.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"
#include "hpo/config/multirun.h"
#include "hpo/config/sweep_parameters.h"
#include "hpo/pruners/pruner_registry.h"
#include "hpo/samplers/sampler_registry.h"

namespace tunefleet {
namespace hpo {
namespace {

bool ValidName(const std::string& name) {
  return !name.empty() && name.size() <= 128 && AllAlnumOr(name, "-_.") && name != "." &&
         name != "..";
}

// resources.gpus_per_trial: ranks (an integer >= 1), or a share of one GPU, 1/N (0.5, 0.25):
// then one rank, N trials to a GPU; resources.trials_per_gpu: N says the same.
absl::Status ParseGpusPerTrial(const ConfigMap& m, SweepConfig* c) {
  double gpus = 1;
  RETURN_IF_ERROR(m.GetOptional("gpus_per_trial", &gpus));
  if (!(gpus > 0)) return m.Error("gpus_per_trial", "must be > 0 (ranks, or 1/N of a GPU)");
  int64_t share = 1;
  if (gpus < 1) {
    share = std::llround(1.0 / gpus);
    if (std::abs(1.0 / static_cast<double>(share) - gpus) > 1e-6) {
      return m.Error("gpus_per_trial", absl::StrCat(gpus,
                                                    " is not 1/N of a GPU: use 0.5, 0.25, ... or "
                                                    "resources.trials_per_gpu: N"));
    }
  } else if (gpus != std::floor(gpus)) {
    return m.Error("gpus_per_trial",
                   absl::StrCat(gpus, " is neither a number of ranks nor 1/N of a GPU"));
  }
  c->gpus_per_trial = share > 1 ? 1 : static_cast<int64_t>(gpus);
  c->trials_per_gpu = share;
  if (!m.Has("trials_per_gpu")) return absl::OkStatus();
  int64_t n = 1;
  RETURN_IF_ERROR(GetAtLeast(m, "trials_per_gpu", &n, 1));
  if (share > 1 && n != share) {
    return m.Error("trials_per_gpu", absl::StrCat(n, " disagrees with gpus_per_trial: ", gpus, " (",
                                                  share, " trials to a GPU): give one"));
  }
  if (n > 1 && c->gpus_per_trial > 1) {
    return m.Error("trials_per_gpu",
                   absl::StrCat("trials share a GPU only with one rank each, not gpus_per_trial: ",
                                c->gpus_per_trial));
  }
  if (n > 64) return m.Error("trials_per_gpu", absl::StrCat("must be <= 64, got ", n));
  c->trials_per_gpu = n;
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
  std::vector<std::string> keys = {"config", "overrides", "synthetic", "evals_per_epoch"};
  keys.insert(keys.end(), ProgramKeys().begin(), ProgramKeys().end());
  RETURN_IF_ERROR(m.AllowOnly(keys));
  const bool has_config = m.Has("config");
  const bool has_synthetic = m.Has("synthetic");
  const bool has_program = m.Has("program");
  if (has_config + has_synthetic + has_program != 1) {
    return m.Error("",
                   "give exactly one of 'config' (a trainer YAML), 'program' (a command of "
                   "your own) or 'synthetic'");
  }
  if (!has_program) {
    for (const std::string& key : ProgramKeys()) {
      if (m.Has(key)) return m.Error(key, "only applies to trainer.program");
    }
  }
  if (has_program) {
    for (const char* key : {"overrides", "evals_per_epoch"}) {
      if (m.Has(key)) {
        return m.Error(key, "only applies to a trainer config (a program reads its own settings)");
      }
    }
    t->program = true;
    return ParseProgram(m, &t->program_spec);
  }
  if (has_synthetic) {
    if (m.Has("overrides")) return m.Error("overrides", "only applies to a trainer config");
    if (m.Has("evals_per_epoch")) {
      return m.Error("evals_per_epoch",
                     "only applies to a trainer config (the synthetic trainer "
                     "reports at every step)");
    }
    t->synthetic = true;
    ASSIGN_OR_RETURN(ConfigMap s, m.GetOptionalMap("synthetic"));
    RETURN_IF_ERROR(s.AllowOnly({"steps", "samples_per_step", "seconds_per_step", "noise", "seed",
                                 "memory_mib", "oom_when_shared"}));
    RETURN_IF_ERROR(s.GetOptional("memory_mib", &t->synthetic_spec.memory_mib));
    if (t->synthetic_spec.memory_mib < 0) return s.Error("memory_mib", "must be >= 0");
    RETURN_IF_ERROR(s.GetOptional("oom_when_shared", &t->synthetic_spec.oom_when_shared));
    SyntheticSpec& spec = t->synthetic_spec;
    RETURN_IF_ERROR(GetAtLeast(s, "steps", &spec.steps, 0));
    RETURN_IF_ERROR(GetAtLeast(s, "samples_per_step", &spec.samples_per_step, 1));
    t->samples_per_epoch = spec.steps * spec.samples_per_step;
    RETURN_IF_ERROR(s.GetOptional("seconds_per_step", &spec.seconds_per_step));
    if (spec.seconds_per_step < 0 || spec.seconds_per_step > 3600) {
      return s.Error("seconds_per_step",
                     absl::StrCat("must be in [0, 3600], got ", spec.seconds_per_step));
    }
    RETURN_IF_ERROR(s.GetOptional("noise", &spec.noise));
    if (spec.noise < 0) return s.Error("noise", absl::StrCat("must be >= 0, got ", spec.noise));
    RETURN_IF_ERROR(GetAtLeast(s, "seed", &spec.seed, 0));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(m.Get("config", &t->config));
  if (t->config.empty()) return m.Error("config", "must name a trainer YAML file");
  RETURN_IF_ERROR(GetAtLeast(m, "evals_per_epoch", &t->evals_per_epoch, 1));
  ASSIGN_OR_RETURN(ConfigMap overrides, m.GetOptionalMap("overrides"));
  for (const std::string& key : overrides.Keys()) {
    std::string text;
    RETURN_IF_ERROR(overrides.GetYamlText(key, &text));
    t->overrides.push_back(key + "=" + text);
  }
  RETURN_IF_ERROR(overrides.AllowOnly(overrides.Keys()));  // duplicates
  return absl::OkStatus();
}

absl::Status ParseSearch(const ConfigMap& m, SweepConfig* c, bool read_method) {
  std::vector<std::string> keys = {"method"};
  for (const std::string& section : SamplerSections()) keys.push_back(section);
  RETURN_IF_ERROR(m.AllowOnly(keys));
  if (read_method) {
    RETURN_IF_ERROR(m.GetEnum("method", SamplerMethods(), &c->method));
  }
  // Each sampler module parses and checks its own sections (hpo/samplers/sampler_kind.h).
  return ParseSamplerSections(m, c);
}

// A program's templates against the sweep's parameters, its environment against
// resources.env, and its GPU sharing against its declared memory.
absl::Status CheckProgramSection(const ConfigMap& trainer, const ConfigMap& resources,
                                 const SweepConfig& c) {
  const ProgramSpec& p = c.trainer.program_spec;
  std::vector<std::string> params = {"lr", "batch_size"};
  for (const ParamSpec& spec : c.params) params.push_back(spec.name);
  RETURN_IF_ERROR(CheckProgramTemplates(trainer, p, ProgramValueNames(params)));
  for (const auto& [name, value] : p.env) {
    if (c.env.count(name) > 0) {
      return trainer.Error("env", absl::StrCat(name, " is in resources.env too: give it once"));
    }
  }
  if (c.trials_per_gpu > 1 && p.gpu_memory_mib <= 0) {
    return resources.Error(resources.Has("trials_per_gpu") ? "trials_per_gpu" : "gpus_per_trial",
                           "a program shares a GPU only when it declares its peak GPU memory: set "
                           "trainer.gpu_memory_mib");
  }
  return absl::OkStatus();
}

// The samples of one evaluation interval on the resource axis (the synthetic trainer's is one
// step); 0 when the training data could not be read here.
int64_t EvaluationInterval(const TrainerSpec& t) {
  if (t.synthetic) return t.synthetic_spec.samples_per_step;
  if (t.samples_per_epoch <= 0) return 0;
  return std::max<int64_t>(1, std::llround(static_cast<double>(t.samples_per_epoch) /
                                           static_cast<double>(t.evals_per_epoch)));
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

namespace {

// The top-level keys of a sweep file.
const std::vector<std::string>& SweepSections() {
  static const auto* const kSections = new std::vector<std::string>{"name",
                                                                    "metric",
                                                                    "trainer",
                                                                    "resources",
                                                                    "parameters",
                                                                    "lr_scaling",
                                                                    "search",
                                                                    "method",
                                                                    "early_terminate",
                                                                    "max_concurrent_trials",
                                                                    "max_failures_per_trial",
                                                                    "journal"};
  return *kSections;
}

// The trainer YAML `config` names: from the working directory, else beside the sweep file.
std::string TrainerConfigPath(const std::string& config, const std::string& sweep_path) {
  if (FileExists(config) || config.empty() || config[0] == '/') return config;
  const size_t slash = sweep_path.rfind('/');
  const std::string beside =
      (slash == std::string::npos ? "" : sweep_path.substr(0, slash + 1)) + config;
  return FileExists(beside) ? beside : config;
}

// The trainer's keys for the trainer config of `file` (read when first asked, with the
// overrides applied by then), asked of the trainer once: a dry run without checks.
TrainerKeys AskTrainerKeys(const ConfigFile* file, const std::string& path,
                           const AskTrainer& ask_trainer) {
  using Keys = absl::StatusOr<std::vector<std::string>>;
  auto cache = std::make_shared<std::optional<Keys>>();
  return [file, path, ask_trainer, cache]() -> Keys {
    if (cache->has_value()) return **cache;
    TrainerSpec trainer;
    absl::StatusOr<ConfigMap> root = file->Root();
    absl::StatusOr<ConfigMap> section = root.ok() ? root->GetMap("trainer") : root.status();
    absl::Status parsed = section.ok() ? ParseTrainer(*section, &trainer) : section.status();
    if (!parsed.ok()) return parsed;  // not cached: ParseSweepConfig says it at its place
    TrainerQuery query;
    query.config = TrainerConfigPath(trainer.config, path);
    query.overrides = trainer.overrides;
    absl::StatusOr<TrainerAnswer> answer =
        QueryTrainer(ask_trainer ? ask_trainer : TrainerBinary(), query);
    *cache = answer.ok()
                 ? Keys(answer->key_names)
                 : Keys(absl::Status(
                       answer.status().code(),
                       absl::StrCat(path, ": trainer.config: ", answer.status().message())));
    return **cache;
  };
}

}  // namespace

absl::StatusOr<SweepConfig> ParseSweepConfig(const ConfigFile& file,
                                             const TrainerKeys& trainer_keys) {
  ASSIGN_OR_RETURN(ConfigMap root, file.Root());
  RETURN_IF_ERROR(root.AllowOnly(SweepSections()));
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
  RETURN_IF_ERROR(resources.AllowOnly({"gpus_per_trial", "trials_per_gpu", "stage", "fetch_back",
                                       "env", "reuse_workers", "worker_max_trials"}));
  if (resources.Has("env")) {
    ASSIGN_OR_RETURN(ConfigMap env, resources.GetMap("env"));
    RETURN_IF_ERROR(GetTrialEnv(env, &c.env));
  }
  RETURN_IF_ERROR(resources.GetOptional("fetch_back", &c.fetch_back));
  RETURN_IF_ERROR(resources.GetOptional("reuse_workers", &c.reuse_workers));
  RETURN_IF_ERROR(GetAtLeast(resources, "worker_max_trials", &c.worker_max_trials, 1));
  if (c.worker_max_trials > INT32_MAX) {  // TrialSpec.worker_max_trials is an int32
    return resources.Error("worker_max_trials",
                           absl::StrCat("must be <= ", INT32_MAX, ", got ", c.worker_max_trials));
  }
  RETURN_IF_ERROR(ParseGpusPerTrial(resources, &c));
  if (resources.Has("stage")) {
    RETURN_IF_ERROR(resources.Get("stage", &c.stage));
    for (const std::string& path : c.stage) {
      if (path.empty()) return resources.Error("stage", "holds an empty path");
    }
  }
  ASSIGN_OR_RETURN(ConfigMap parameters, root.GetMap("parameters"));
  RETURN_IF_ERROR(ParseParameters(
      parameters, &c.lr, &c.batch_sizes, &c.params, nullptr,
      c.trainer.program ? ParamNames::kFree
                        : ParamNames(ParamNames::kTrainerKeys,
                                     c.trainer.native() ? trainer_keys : TrainerKeys())));
  if (c.trainer.program) RETURN_IF_ERROR(CheckProgramSection(trainer, resources, c));
  if (c.trainer.synthetic && !c.params.empty()) {
    return parameters.Error("", absl::StrCat("the synthetic trainer takes only lr and "
                                             "batch_size, not ",
                                             c.params[0].name));
  }
  ASSIGN_OR_RETURN(ConfigMap scaling, root.GetOptionalMap("lr_scaling"));
  RETURN_IF_ERROR(scaling.AllowOnly({"rule", "base_batch"}));
  RETURN_IF_ERROR(scaling.GetEnum("rule", {"linear", "none"}, &c.lr_scaling.rule));
  RETURN_IF_ERROR(GetAtLeast(scaling, "base_batch", &c.lr_scaling.base_batch, 1));
  ASSIGN_OR_RETURN(ConfigMap search, root.GetOptionalMap("search"));
  bool top_level_method = root.Has("method");  // W&B's spelling of search.method
  if (top_level_method && search.Has("method")) {
    // The command line wins over the file; twice in the file (or on the command line) is an
    // error.
    if (root.FromOverride("method") == search.FromOverride("method")) {
      return root.Error("method", "give the method once: method or search.method");
    }
    top_level_method = root.FromOverride("method");
    c.notes.push_back(
        absl::StrCat(top_level_method ? "method" : "search.method", " (override): ignored ",
                     top_level_method ? "search.method" : "method", " from ", file.name()));
  }
  if (top_level_method) {
    RETURN_IF_ERROR(root.GetEnum("method", SamplerMethods(), &c.method,
                                 /*required=*/true));
  }
  RETURN_IF_ERROR(ParseSearch(search, &c, /*read_method=*/!top_level_method));
  if (root.Has("early_terminate")) {
    ASSIGN_OR_RETURN(ConfigMap early, root.GetMap("early_terminate"));
    ASSIGN_OR_RETURN(c.pruner, ParseEarlyTerminate(early, &c.notes));
  }
  RETURN_IF_ERROR(GetAtLeast(root, "max_concurrent_trials", &c.max_concurrent_trials, 1));
  RETURN_IF_ERROR(GetAtLeast(root, "max_failures_per_trial", &c.max_failures_per_trial, 0));
  c.journal = "runs/" + c.name + "/journal.log";
  RETURN_IF_ERROR(root.GetOptional("journal", &c.journal));
  if (c.journal.empty()) return root.Error("journal", "must not be empty");
  return c;
}

const ParamSpec* SweepConfig::FindParam(const std::string& param) const {
  if (param == "lr") return &lr;
  for (const ParamSpec& p : params) {
    if (p.name == param) return &p;
  }
  return nullptr;
}

absl::StatusOr<SweepConfig> LoadSweepConfig(const std::string& path,
                                            const std::vector<std::string>& overrides,
                                            bool multirun, const AskTrainer& ask_trainer) {
  ASSIGN_OR_RETURN(SweepConfig config, ReadSweepFile(path, overrides, multirun, ask_trainer));
  RETURN_IF_ERROR(AskTrainerFor(config, path, ask_trainer));
  return config;
}

absl::StatusOr<SweepConfig> ReadSweepFile(const std::string& path,
                                          const std::vector<std::string>& overrides, bool multirun,
                                          const AskTrainer& ask_trainer) {
  ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
  const TrainerKeys keys = AskTrainerKeys(&file, path, ask_trainer);
  if (multirun) {
    RETURN_IF_ERROR(ApplyMultirunOverrides(overrides, SweepSections(), &file, keys));
  } else {
    RETURN_IF_ERROR(AddMultirunHint(file.ApplyOverrides(overrides), overrides));
  }
  absl::StatusOr<SweepConfig> parsed = ParseSweepConfig(file, keys);
  if (!parsed.ok() && !multirun) return AddMultirunHint(parsed.status(), overrides);
  ASSIGN_OR_RETURN(SweepConfig config, std::move(parsed));
  constexpr absl::string_view kOutputDir = "output.dir=";
  for (const std::string& o : config.trainer.overrides) {
    if (absl::StartsWith(o, kOutputDir)) {
      config.notes.push_back(absl::StrCat(
          "trainer.overrides output.dir (", ClipValue(o.substr(kOutputDir.size())),
          "): not used: each trial writes to its own folder, trial-N beside the journal"));
    }
  }
  return config;
}

absl::Status AskTrainerFor(SweepConfig& config, const std::string& path,
                           const AskTrainer& ask_trainer) {
  if (config.trainer.program) {
    RETURN_IF_ERROR(ResolveProgramFolder(config.trainer.program_spec, path));
  }
  if (config.trainer.native()) {
    const std::string trainer_path = TrainerConfigPath(config.trainer.config, path);
    // The trainer judges its config, its overrides and every searched value, and counts the
    // data, in one dry run (hpo/config/trainer_query.h).
    TrainerQuery query;
    query.config = trainer_path;
    query.overrides = config.trainer.overrides;
    query.checks = TrainerChecks(config.params, config.batch_sizes);
    query.world_size = config.gpus_per_trial;
    absl::StatusOr<TrainerAnswer> answer =
        QueryTrainer(ask_trainer ? ask_trainer : TrainerBinary(), query);
    if (!answer.ok()) {
      return absl::Status(answer.status().code(),
                          absl::StrCat(path, ": trainer.config: ", answer.status().message()));
    }
    config.trainer.config = trainer_path;
    config.trainer.keys = answer->keys;
    config.trainer.preflight = answer->preflight;
    if (auto it = answer->keys.find("train.grad_accum"); it != answer->keys.end()) {
      config.trainer.grad_accum = std::strtoll(it->second.c_str(), nullptr, 10);
    }
    RETURN_IF_ERROR(CheckParametersWithTrainer(config.params, answer->checks, path));
    config.trainer.samples_per_epoch = answer->samples_per_epoch;
  }
  ASSIGN_OR_RETURN(config.pruner,
                   config.pruner->Resolve({EvaluationInterval(config.trainer)}, path));
  // Staged paths: absolute, relative to the working directory, or beside the sweep file.
  for (std::string& stage : config.stage) {
    std::string found = stage;
    if (stage[0] != '/') {
      const size_t slash = path.rfind('/');
      const std::string beside =
          (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + stage;
      found = PathExists(stage) ? stage : beside;
      if (found[0] != '/') {
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof(cwd)) != nullptr) found = absl::StrCat(cwd, "/", found);
      }
    }
    if (!PathExists(found)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": resources.stage: ", ClipPath(stage), ": no such file or folder"));
    }
    stage = found;
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
