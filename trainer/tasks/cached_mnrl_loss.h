// task.loss cached_mnrl: sentence-transformers' CachedMultipleNegativesRankingLoss (GradCache,
// Gao et al. 2021) on the rows of task.type mnrl. Its value and gradients are MNRL's on the same
// batch (trainer/tasks/mnrl_loss.h), but the encoder holds only task.cached_mini_batch texts'
// activations at a time, so the batch (and with it the in-batch negatives) can grow far past
// what MNRL fits in memory:
//   1. every text is embedded mini-batch by mini-batch without a graph;
//   2. the loss (with any MatryoshkaLoss) over those embeddings, and its gradient with respect
//      to them, are computed at once;
//   3. when the step's backward reaches the returned loss, a hook embeds each mini-batch again
//      with a graph and backpropagates the cached gradient through it.
// Dropout draws new masks in step 3 (sentence-transformers replays step 1's random state): with
// model.dropout > 0 the gradient is that of slightly different embeddings. Settings:
// task.loss_scale (default 20) and task.cached_mini_batch (default 32). The step takes no CUDA
// graphs, and under data parallelism gradients are sent after the whole backward.
// Thread-safety: an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& CachedMnrlLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_
