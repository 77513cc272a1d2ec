// The loss registry's list: every task.loss the trainer knows, one LossKind each
// (trainer/tasks/task.h), in the order task.loss's choices are listed. Adding a loss is one line
// here (docs/CONTRIBUTING.md, "Add a loss"). Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_ALL_LOSSES_H_
#define TUNEFLEET_TRAINER_TASKS_ALL_LOSSES_H_

#include <vector>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const std::vector<const LossKind*>& AllLossKinds();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_ALL_LOSSES_H_
