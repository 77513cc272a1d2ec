// task.loss margin_mse: sentence-transformers' MarginMSELoss, for a bi-encoder (task type
// margin) and for a cross-encoder (task type cross_encoder_margin). Rows (query, positive,
// negative...) with a teacher's margin per negative (trainer/data/task_data.h, kMargin); the
// value is the mean squared error between the student's margins and the teacher's:
//   bi-encoder     dot(q, p) - dot(q, n_k)                   (util.pairwise_dot_score)
//   cross-encoder  logit(q, p) - logit(q, n_k)               (activation Identity)
// over [B, negatives]. The margins come from `trainer predict` on (query, positive) and
// (query, negative) pairs (docs/CONFIG.md, "Distillation").
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_MARGIN_MSE_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_MARGIN_MSE_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& MarginMseLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_MARGIN_MSE_LOSS_H_
