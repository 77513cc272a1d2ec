// task.type nli: sentence-transformers' SoftmaxLoss: a head Linear(3H, K) (torch's default
// init) over [u; v; |u - v|] with u = pool(a), v = pool(b), cross entropy against the label;
// evaluated by accuracy. Takes task.num_labels (0: from the data) and model.head.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_NLI_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_NLI_TASK_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& NliLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_NLI_TASK_H_
