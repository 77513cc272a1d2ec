// task.loss cosent and angle: sentence-transformers' CoSENTLoss and AnglELoss (trainer/tasks/
// losses.h) on pairs with a score (sts) or a 0/1 label (contrastive): every pair scored above
// another should be more similar, by cosine (cosent) or by the normalized angle (angle). Their
// setting: task.loss_scale (default 20). No head.
// Thread-safety: immutable statics.
#ifndef TUNEFLEET_TRAINER_TASKS_COSENT_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_COSENT_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& CoSentLossKind();
const LossKind& AnglELossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_COSENT_LOSS_H_
