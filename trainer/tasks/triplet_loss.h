// task.loss triplet (task type mnrl, rows anchor, positive, one negative): sentence-transformers'
// TripletLoss with its defaults: mean over the batch of relu(d(a, p) - d(a, n) + margin), d the
// euclidean distance as F.pairwise_distance computes it (||x - y + 1e-6||), task.margin
// (default 5).
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_TRIPLET_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_TRIPLET_LOSS_H_

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

inline constexpr double kTripletMargin = 5.0;

torch::Tensor TripletLoss(const torch::Tensor& anchors, const torch::Tensor& positives,
                          const torch::Tensor& negatives, double margin = kTripletMargin);

const LossKind& TripletLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TRIPLET_LOSS_H_
