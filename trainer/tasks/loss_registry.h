// The loss registry (trainer/tasks/all_losses.h) put to use: the task of a config, and the
// reader of the trainer YAML's task section that `trainer_torch` installs
// (trainer/config/train_config.h, SetTaskSectionReader), which checks what depends on task.type:
//   - task.type is a registered type;
//   - a key some types take (task.num_labels, task.margin, ...) is given only to a type that
//     takes it ("task.num_labels: only applies to task types classification and nli"), where
//     task.num_labels: 0 ("from the data", what the resolved config writes for every type)
//     counts as not given;
//   - model.head is given only to a type with a head;
//   - the type's own keys, which its entry parses.
// Thread-safety: stateless; the reader is an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_
#define TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/tasks/task.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

// The entry of `type`; null for none.
const LossKind* FindLossKind(absl::string_view type);

// The task of config.type with its settings; InvalidArgument for an unknown type, naming the
// choices.
absl::StatusOr<TaskPtr> MakeTask(const TaskConfig& config);
// The task of `type` with its defaults.
absl::StatusOr<TaskPtr> MakeTask(absl::string_view type);

// "sts, mnrl, nli, classification or contrastive": the types, for messages.
std::string TaskTypeChoices();

const TaskSectionReader& LossRegistryReader();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_
