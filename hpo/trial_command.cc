#include "hpo/trial_command.h"

#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "comm/trainer_overrides.h"
#include "common/number_text.h"
#include "hpo/config/sweep_parameters.h"
#include "hpo/program_command.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return absl::StrCat(cwd, "/", path);
}

}  // namespace

std::string ExactNumber(double value) { return ShortestText(value); }

std::string TrialHParamsJson(const SweepConfig& config, const Trial& trial) {
  return TrialParamsJson(BuildSearchSpace(config), trial);
}

void FillTrainerCommand(const SweepConfig& config, const Trial& trial, const std::string& run_dir,
                        comm::TrialSpec* spec) {
  const std::string lr = ExactNumber(trial.lr_effective);
  const auto batch = static_cast<int64_t>(trial.params.at(kBatchParam));
  spec->clear_argv();
  spec->clear_overrides();
  if (config.trainer.program) {
    FillProgramCommand(config.trainer.program_spec, BuildSearchSpace(config), trial, run_dir, spec);
    return;
  }
  if (config.trainer.synthetic) {
    const SyntheticSpec& s = config.trainer.synthetic_spec;
    for (const std::string& a :
         {std::string("synthetic"), std::string("--steps"), std::to_string(s.steps),
          std::string("--samples_per_step"), std::to_string(s.samples_per_step),
          std::string("--seconds_per_step"), ExactNumber(s.seconds_per_step),
          std::string("--noise"), ExactNumber(s.noise), std::string("--seed"),
          std::to_string(s.seed), std::string("--lr_effective"), lr, std::string("--batch_size"),
          std::to_string(batch), std::string("--metric"), config.metric_name}) {
      spec->add_argv(a);
    }
    if (s.oom_when_shared) spec->add_argv("--oom_when_shared");
    return;
  }
  for (const char* a : {"train", "--config"}) spec->add_argv(a);
  spec->add_argv(Absolute(config.trainer.config));
  auto add = [&](const std::string& key) {
    comm::TrainerOverride* o = spec->add_overrides();
    o->set_key(key);
    return o;
  };
  for (const std::string& text : config.trainer.overrides) {  // "key=YAML", as the file wrote it
    absl::StatusOr<comm::TrainerOverride> o = comm::ParseOverrideArg(text);
    if (o.ok()) {
      *spec->add_overrides() = *std::move(o);
    } else {
      const size_t eq = text.find('=');
      add(text.substr(0, eq))->set_yaml_value(eq == std::string::npos ? "" : text.substr(eq + 1));
    }
  }
  // The resource axis: the same evaluation points per epoch for every batch size.
  add("train.eval_every_steps")->set_int_value(0);
  add("train.eval_every_samples")->set_int_value(0);
  add("train.eval_every_epochs")
      ->set_double_value(1.0 / static_cast<double>(config.trainer.evals_per_epoch));
  for (const ParamSpec& p : config.params) {
    auto value = trial.params.find(p.name);
    if (value == trial.params.end()) continue;
    comm::TrainerOverride* o = add(p.name);
    const double v = value->second;
    if (!p.labels.empty()) {
      o->set_string_value(ParamValueText(p, v));
    } else if (p.distribution == "int" ||
               (p.distribution == "categorical" && v == std::floor(v) && std::fabs(v) < 9e15)) {
      o->set_int_value(std::llround(v));
    } else {
      o->set_double_value(v);
    }
  }
  add("train.lr")->set_double_value(trial.lr_effective);
  add("train.batch_size")->set_int_value(batch);
  add("output.dir")->set_string_value(absl::StrCat(run_dir, "/trial-", trial.number));
}

void FillTrialSpec(const SweepConfig& config, const Trial& trial, const std::string& run_dir,
                   double memory_mib, comm::TrialSpec* spec) {
  spec->set_trial(trial.number);
  spec->set_sweep(config.name);
  spec->set_world_size(static_cast<int32_t>(config.gpus_per_trial));
  spec->set_log_dir(run_dir + "/logs");
  for (const std::string& path : config.stage) spec->add_stage()->set_path(path);
  // The trainer writes them into its TensorBoard event file (the HParams view); a program
  // reads them as TUNEFLEET_PARAMS.
  spec->set_params_json(TrialHParamsJson(config, trial));
  for (const auto& [name, value] : config.env) (*spec->mutable_env())[name] = value;
  // The agent runs its ranks in warm workers only when it can (`trainer train`).
  spec->set_reuse_worker(config.reuse_workers);
  spec->set_worker_max_trials(static_cast<int32_t>(config.worker_max_trials));
  if (config.trials_per_gpu > 1) {
    spec->set_trials_per_gpu(static_cast<int32_t>(config.trials_per_gpu));
    spec->set_memory_mib(memory_mib);
  }
  FillTrainerCommand(config, trial, run_dir, spec);  // a program's: no warm worker
  if (config.fetch_back && !config.trainer.synthetic) {
    spec->set_fetch_back(absl::StrCat(run_dir, "/trial-", trial.number));  // its output.dir
  }
}

}  // namespace hpo
}  // namespace tunefleet
