// task.loss cosine: sentence-transformers' CosineSimilarityLoss, mean((cos(u, v) - score)^2), on
// pairs with a score in [0, 1] (task.type sts) or a 0/1 label (contrastive). The default loss of
// sts. No head, no settings.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_COSINE_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_COSINE_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& CosineLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_COSINE_LOSS_H_
