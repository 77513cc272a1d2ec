// task.datasets (trainer/config/config_schema.h, TaskConfig::datasets): several training sets in
// one run, as sentence-transformers' trainer with a DatasetDict. A mapping NAME -> {train,
// format, columns, label_column, loss, prompts}, each key read and checked as the task section's
// key of that name (train and format required; loss: task.loss by default; prompts: task.prompts
// by default). Errors name the file, the line and the key (ConfigMap::Error), e.g.
//   train.yaml:7: task.datasets.nli.format: is required
// The loss registry infers each dataset's type from its loss (trainer/tasks/loss_registry.h).
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_CONFIG_DATASETS_KEY_H_
#define TUNEFLEET_TRAINER_CONFIG_DATASETS_KEY_H_

#include <string>

#include "absl/status/status.h"
#include "common/yaml_config.h"
#include "trainer/config/config_schema.h"

namespace tunefleet {
namespace trainer {

inline constexpr char kDatasetsKey[] = "datasets";

// Reads task.datasets of the task section `task` (read before: model.kind, task.loss,
// task.prompts) into config->task.datasets; task.format, when the YAML leaves it out, becomes the
// first dataset's. Nothing when `task` has no datasets key.
absl::Status ReadDatasetsKey(const ConfigMap& task, TrainerConfig* config);

// The task section as dataset `d` trains on it: its train file, format, columns, label column,
// type, loss, prompts and settings, the section's other keys; no datasets.
TaskConfig DatasetTask(const TaskConfig& task, const DatasetConfig& d);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_DATASETS_KEY_H_
