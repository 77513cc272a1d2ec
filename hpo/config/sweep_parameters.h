// The `parameters` section of a sweep YAML: what the trials vary.
//
//   parameters:
//     lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}  # or uniform, or values: [...]
//     batch_size: {values: [16, 32, 64, 128]}                    # per-rank batch sizes
//     train.weight_decay: {distribution: uniform, min: 0.0, max: 0.1}
//     warmup_ratio: {values: [0.0, 0.1]}                         # = train.warmup_ratio
//     train: {epochs: {distribution: int, min: 1, max: 3}}      # the nested form
//     model.pooling: {values: [mean, cls]}
//
// Names: `lr` and `batch_size` (`train.lr`, `train.batch_size` name them too); any other entry
// is a trainer key (the trainer's dry run lists them: TrainerKeys), by its dotted name or by its
// last part alone when exactly one trainer key ends so. An entry holding distribution, min, max or
// values is a parameter; any other mapping is a namespace (the nested form). Keys that hpo sets for
// every trial are not parameters: output.dir and the evaluation cadence (train.eval_every_*).
//
// Distributions (Optuna's in the journal):
//   log_uniform  0 < min < max            FloatDistribution(log=True)    W&B: log_uniform_values
//   uniform      min < max                FloatDistribution
//   int          integers, min <= max     IntDistribution                W&B: int_uniform
//   values       numbers or strings       CategoricalDistribution        W&B: categorical
// `lr` takes log_uniform, uniform or values (kept sorted); `batch_size` takes values of
// positive integers (kept sorted). A parameter's value of a categorical of strings is held as
// the choice's index (Optuna's internal form), its label given to the trainer.
#ifndef TUNEFLEET_HPO_CONFIG_SWEEP_PARAMETERS_H_
#define TUNEFLEET_HPO_CONFIG_SWEEP_PARAMETERS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace hpo {

// The largest batch size searched: the trainer's limit of train.batch_size (2^20 examples a
// rank), refused at the sweep file's line (the trainer checks it too: TrainerChecks).
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 20;

// One searched parameter. `name` is "lr", "batch_size" or a dotted trainer key.
struct ParamSpec {
  std::string name;
  std::string distribution = "log_uniform";  // log_uniform | uniform | int | categorical
  double min = 0;                            // log_uniform, uniform, int (integral)
  double max = 0;
  std::vector<double> values;       // categorical of numbers (lr: sorted ascending)
  std::vector<std::string> labels;  // categorical of strings (then `values` is empty)
  int line = 0;                     // where the sweep file gives it, for messages
};

// One entry of the section as the file writes it (for hpo sweep --multirun, hpo/config/multirun.h).
struct ParameterEntry {
  std::string name;    // lr, batch_size or the trainer key it stands for
  std::string path;    // its dotted path under `parameters`: train: {lr: ...} -> "train.lr"
  int64_t values = 0;  // how many values it takes: a list's length, 1 for int min == max, 0 for
                       // a range
  ConfigMap parent;    // errors at the entry: parent.Error(at, ...)
  std::string at;
};

// The trainer's keys, in its order (the dry run's "keys", hpo/config/trainer_query.h), asked of
// the trainer the first time a parameter name needs them; an error is the trainer's, as it is.
using TrainerKeys = std::function<absl::StatusOr<std::vector<std::string>>()>;

// What the parameters other than lr and batch_size name: tunefleet's trainer keys (by the rules
// above, against `trainer_keys`; without it a name stays as written), or, for a program of the
// user's own (trainer.program, hpo/config/program_config.h), anything: its own names (letters,
// digits, '_', '.', '-'), as its templates use them, except the names hpo gives every trial
// (lr_base, lr_effective, trial, trial_dir).
struct ParamNames {
  enum Kind { kTrainerKeys, kFree };
  ParamNames(Kind k = kTrainerKeys, TrainerKeys keys = {})  // NOLINT: a Kind converts
      : kind(k), trainer_keys(std::move(keys)) {}
  Kind kind;
  TrainerKeys trainer_keys;
};

// Reads the section into `lr`, `batch_sizes` (ascending) and `others` (the trainer keys, in
// file order), and, when `listed` is given, each entry into it. Errors name the file, the line
// and the dotted key.
absl::Status ParseParameters(const ConfigMap& parameters, ParamSpec* lr,
                             std::vector<int64_t>* batch_sizes, std::vector<ParamSpec>* others,
                             std::vector<ParameterEntry>* listed = nullptr,
                             ParamNames names = ParamNames::kTrainerKeys);

// The parameter a name stands for, by the rules above: "lr", "batch_size" or the trainer key
// ("weight_decay" -> "train.weight_decay"); else an error saying why (no location).
absl::StatusOr<std::string> ParameterName(const std::string& name,
                                          ParamNames names = ParamNames::kTrainerKeys);

// The overrides the trainer is asked about before a sweep (hpo/config/trainer_query.h), in
// order: each searched trainer key at its bounds, at a point inside them, and at each of its
// values ("train.epochs=1", "model.pooling=cls").
// Then each of `batch_sizes` ("train.batch_size=32"), for the trainer's memory estimate of each
// (hpo/config/trainer_query.h TrainerPreflight::memory); CheckParametersWithTrainer does not
// look at their verdicts.
std::vector<std::string> TrainerChecks(const std::vector<ParamSpec>& others,
                                       const std::vector<int64_t>& batch_sizes = {});

// Checks the searched trainer keys against the trainer's verdicts on TrainerChecks(others)
// (override, error or "" when the config loads with it; the sweep's trainer overrides applied),
// so that a key the trainer does not read, a value out of the trainer's range or a fraction for
// an integer key fails before any trial starts. The error names the parameter and quotes the
// trainer's own message. `sweep_source` is the sweep file, for the message.
absl::Status CheckParametersWithTrainer(
    const std::vector<ParamSpec>& others,
    const std::vector<std::pair<std::string, std::string>>& verdicts,
    const std::string& sweep_source);

// A parameter's value as the trainer override gives it: "0.05", "3", "cls".
std::string ParamValueText(const ParamSpec& spec, double value);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_SWEEP_PARAMETERS_H_
