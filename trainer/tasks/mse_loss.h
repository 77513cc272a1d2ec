// task.loss mse: sentence-transformers' MSELoss, for a bi-encoder (task type embedding: a text
// and a teacher's embedding of the same width; the mean squared error of the student's
// embedding against it) and for a cross-encoder (task type cross_encoder: a pair and a score in
// [0, 1], e.g. a teacher's `trainer predict` score; the mean squared error of the one-output
// head's logit against it, activation Identity).
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_MSE_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_MSE_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& MseLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_MSE_LOSS_H_
