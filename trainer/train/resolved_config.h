// The resolved config of a training run, as Hydra keeps `.hydra/config.yaml` beside a run's
// output: OUTPUT_DIR/.tunefleet/config.yaml holds every key of the trainer YAML
// (TrainerConfigKeys()) with the value the run trained with, the file's and the command line's
// overrides applied, defaults included, and the paths (model.path, model.head, task.train,
// task.eval, output.dir) made absolute against the folder the trainer ran in; and
// OUTPUT_DIR/.tunefleet/overrides.yaml the command line's overrides as given. So
//   trainer train --config OUTPUT_DIR/.tunefleet/config.yaml [output.dir=ELSEWHERE]
// re-runs it alone from any folder (hpo best prints that command for a sweep's best trial).
// A rank of a job a launcher started (an agent's trial, torchrun) records train.devices as the
// job's world size, so that the re-run starts as many ranks itself
// (trainer/distributed/local_ranks.h). Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_TRAIN_RESOLVED_CONFIG_H_
#define TUNEFLEET_TRAINER_TRAIN_RESOLVED_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

inline constexpr char kResolvedConfigDir[] = ".tunefleet";

// `config` as YAML text (every key; paths absolute against `base_dir`), under a comment naming
// where it came from (`source`, `overrides`).
std::string ResolvedConfigYaml(const TrainerConfig& config, const std::string& base_dir,
                               const std::vector<std::string>& overrides);

// Writes OUTPUT_DIR/.tunefleet/config.yaml and overrides.yaml (each atomically, folders made).
// `world_size` > 1 when a launcher started this job's ranks: recorded as train.devices.
absl::Status WriteResolvedConfig(const TrainerConfig& config,
                                 const std::vector<std::string>& overrides, int world_size);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_RESOLVED_CONFIG_H_
