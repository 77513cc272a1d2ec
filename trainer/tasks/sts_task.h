// task.type sts: sentence-transformers' CosineSimilarityLoss, mean((cos(pool(a), pool(b)) -
// score)^2), on pairs scored in [0, 1] (the file's score / its maximum: 5 for stsb and sick);
// evaluated by the similarity of the pair against the scores (STS Spearman). No head, no
// settings of its own.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_STS_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_STS_TASK_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& StsLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_STS_TASK_H_
