#include "hpo/trial_command.h"

#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "common/number_text.h"
#include "hpo/journal/py_json.h"
#include "hpo/search_space.h"
#include "hpo/config/sweep_parameters.h"

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
  std::string out = "{";
  auto add = [&](const std::string& name, const std::string& json) {
    absl::StrAppend(&out, out.size() > 1 ? ", " : "", JsonString(name), ": ", json);
  };
  for (const auto& [name, value] : trial.params) {
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& p : config.params) {
      if (p.name == name) spec = &p;
    }
    add(name, spec != nullptr && !spec->labels.empty() ? JsonString(ParamValueText(*spec, value))
                                                       : ExactNumber(value));
  }
  add("lr_effective", ExactNumber(trial.lr_effective));
  return out + "}";
}

std::vector<std::string> TrainerArgs(const SweepConfig& config, const Trial& trial,
                                     const std::string& run_dir) {
  const std::string lr = ExactNumber(trial.lr_effective);
  const std::string batch = std::to_string(static_cast<long long>(trial.params.at(kBatchParam)));
  if (config.trainer.synthetic) {
    const SyntheticSpec& s = config.trainer.synthetic_spec;
    return {"synthetic",        "--steps",        std::to_string(s.steps),
            "--samples_per_step", std::to_string(s.samples_per_step),
            "--seconds_per_step", ExactNumber(s.seconds_per_step),
            "--noise",          ExactNumber(s.noise),
            "--seed",           std::to_string(s.seed),
            "--lr_effective",   lr,
            "--batch_size",     batch,
            "--metric",         config.metric_name};
  }
  std::vector<std::string> args = {"train", "--config", Absolute(config.trainer.config)};
  for (const std::string& o : config.trainer.overrides) args.push_back(o);
  // The resource axis: the same evaluation points per epoch for every batch size.
  args.push_back("train.eval_every_steps=0");
  args.push_back("train.eval_every_samples=0");
  args.push_back("train.eval_every_epochs=" +
                 ExactNumber(1.0 / static_cast<double>(config.trainer.evals_per_epoch)));
  for (const ParamSpec& p : config.params) {
    auto value = trial.params.find(p.name);
    if (value != trial.params.end()) args.push_back(p.name + "=" + ParamValueText(p, value->second));
  }
  args.push_back("train.lr=" + lr);
  args.push_back("train.batch_size=" + batch);
  args.push_back(absl::StrCat("output.dir=", run_dir, "/trial-", trial.number));
  return args;
}

}  // namespace hpo
}  // namespace tunefleet
