// The loss registry (trainer/tasks/all_losses.h) put to use: the task of a config, and the
// reader of the trainer YAML's task section that `trainer_torch` installs
// (trainer/config/train_config.h, SetTaskSectionReader), which checks what depends on task.type
// and task.loss:
//   - task.type is a registered type (trainer/tasks/task_types.h), task.loss a registered loss
//     that fits it ("task.loss: cosent does not fit task type mnrl ...");
//   - a key some losses take (task.num_labels, task.margin, task.loss_scale, ...) is given only
//     to a loss that takes it ("task.loss_scale: only applies to task.loss cosent, angle, mnrl
//     and cached_mnrl"), where task.num_labels: 0 ("from the data", what the resolved config
//     writes for every type) counts as not given;
//   - model.head is given only to a loss with a head, task.matryoshka_dims only to a loss over
//     embeddings, task.eval_kind only as the type allows;
//   - the loss's own keys, which its entry parses.
// Thread-safety: stateless; the reader is an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_
#define TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/config/train_config.h"
#include "trainer/tasks/task.h"
#include "trainer/tasks/task_types.h"

namespace tunefleet {
namespace trainer {

// The entry of `loss`; null for none.
const LossKind* FindLossKind(absl::string_view loss);

// The task of config.type with config.loss (empty: the type's default) and its settings;
// InvalidArgument for an unknown type or loss, or a loss that does not fit the type.
absl::StatusOr<TaskPtr> MakeTask(const TaskConfig& config);
// The task of `type` with its default loss and the defaults.
absl::StatusOr<TaskPtr> MakeTask(absl::string_view type);

// "cosine, cosent, ... or contrastive": the losses, for messages.
std::string LossChoices();

const TaskSectionReader& LossRegistryReader();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_LOSS_REGISTRY_H_
