// task.loss bce, the default of task type cross_encoder: sentence-transformers'
// BinaryCrossEntropyLoss for a cross-encoder, BCEWithLogitsLoss (mean over the batch) of the
// one-output head's logit against the pair's label, a score in [0, 1] (soft labels: STS-B's
// score / 5) or 0/1. The head is model.num_labels wide, which must be 1.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_BCE_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_BCE_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& BceLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_BCE_LOSS_H_
