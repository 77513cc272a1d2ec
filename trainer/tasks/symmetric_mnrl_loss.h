// task.loss symmetric_mnrl (task type mnrl): sentence-transformers'
// MultipleNegativesSymmetricRankingLoss with its defaults (scale 20, cosine, gather_across_devices
// off): the mean of MultipleNegativesRankingLoss (each anchor against every positive and hard
// negative of the rank's batch) and its backward direction (each positive against the batch's
// anchors: the forward scores' first B columns, transposed). task.loss_scale sets the scale.
// Under data parallelism each rank's loss is over its own batch, as the reference's default.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_SYMMETRIC_MNRL_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_SYMMETRIC_MNRL_LOSS_H_

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

// anchors [B, H]; candidates [C, H] (the positives first, then negatives).
torch::Tensor SymmetricMnrl(const torch::Tensor& anchors, const torch::Tensor& candidates,
                            double scale);

const LossKind& SymmetricMnrlLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_SYMMETRIC_MNRL_LOSS_H_
