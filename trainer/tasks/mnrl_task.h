// task.type mnrl: sentence-transformers' MultipleNegativesRankingLoss on (anchor, positive) pairs,
// cross_entropy(20 * cos(a_i, p_j), i) with every other positive as a negative; rows labelled 0
// are dropped. Under data parallelism with task.mnrl_gather (the default) every rank's positives
// are all-gathered with gradients, so each anchor sees the global batch's, as one process would.
// Evaluated as sts (the eval file needs scores). No head.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_MNRL_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_MNRL_TASK_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& MnrlLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_MNRL_TASK_H_
