// The trainer YAML contract (docs/CONFIG.md, "The trainer YAML"; its keys are the rows of
// config_schema.h), loaded into a typed struct and validated in one place. Every error names the
// file, the line and the dotted key.
//
//   model: {path: DIR, pooling: mean, max_seq_len: 128, dropout: 0.1}
//   task: {type: sts, train: FILE, eval: FILE, format: stsb}
//   train: {epochs: 1, max_steps: 0, batch_size: 32, lr: 2.0e-5, ...}
//   output: {dir: runs/sbert, save: best, checkpoint: true, checkpoint_every_s: 300}
//
// Parsing checks types and ranges only; whether the files exist is checked when training starts.
// The keys, their members in TrainerConfig, checks and help are rows of one table
// (trainer/config/config_schema.h, included here); the parser iterates it.
#ifndef TUNEFLEET_TRAINER_CONFIG_TRAIN_CONFIG_H_
#define TUNEFLEET_TRAINER_CONFIG_TRAIN_CONFIG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "trainer/config/config_keys.h"    // TrainerConfigKeys
#include "trainer/config/config_schema.h"  // TrainerConfig, TrainerConfigFields, kMaxBatchSize
#include "trainer/config/datasets_key.h"   // task.datasets

namespace tunefleet {
namespace trainer {

// What depends on task.type, read by the trainer's loss registry (trainer/tasks/loss_registry.h),
// which `trainer_torch` installs when it starts. Without one (a reader of the YAML that links no
// LibTorch) task.type may be any name, only the common task keys are accepted, and what a type
// takes is checked when the trainer builds the task.
struct TaskSectionReader {
  std::vector<std::string> types;   // task.type's choices, in order
  std::vector<std::string> losses;  // task.loss's choices, in order
  std::vector<std::string> keys;    // the task keys some type takes beyond the common ones
  // Fills in task.type when the YAML leaves it to task.loss (or to model.kind), checks the keys
  // that depend on it (in `task`, and model.head, model.kind and model.num_labels in `model`)
  // and reads the type's own settings; errors name the file, line and dotted key.
  absl::StatusOr<std::shared_ptr<const TaskSettings>> (*read)(const ConfigMap& task,
                                                              const ConfigMap& model,
                                                              TrainerConfig* config);
  // After a successful read: fills in what the YAML left to the type (task.loss,
  // task.eval_kind).
  void (*resolve)(TaskConfig* task);
  // Each entry of task.datasets (`entry`, its mapping in the task section `task`), before `read`:
  // infers its type from its loss and model.kind (task.type when neither it nor task.loss names
  // a loss), checks that the loss fits, resolves its loss and reads its settings from `task`.
  absl::Status (*read_dataset)(const ConfigMap& task, const ConfigMap& entry,
                               const TrainerConfig& config, DatasetConfig* dataset) = nullptr;
};
// Installs `reader` (a static, or null to remove it) for every later parse. Call it at start-up,
// before any thread parses a config.
void SetTaskSectionReader(const TaskSectionReader* reader);

// `local_gpus`: the GPUs of the machine that trains, or kUnknownGpus (config_schema.h).
// Loads `path`, applies `overrides` ("train.lr=3e-5"), validates.
absl::StatusOr<TrainerConfig> LoadTrainerConfig(const std::string& path,
                                                const std::vector<std::string>& overrides = {},
                                                int local_gpus = kUnknownGpus);
absl::StatusOr<TrainerConfig> ParseTrainerConfig(const ConfigFile& file,
                                                 int local_gpus = kUnknownGpus);

// How many ranks train.devices asks for on a machine with `local_gpus` GPUs (>= 0): -1 is
// one per GPU, or 1 without GPUs.
int64_t LocalRankCount(const TrainConfig& train, int local_gpus);

// The keys of the trainer YAML, one a line with type, default and help, for `trainer train
// --help`.
std::string TrainerConfigHelp();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_TRAIN_CONFIG_H_
