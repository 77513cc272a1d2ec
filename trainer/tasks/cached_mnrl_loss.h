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
// cached_gist (trainer/tasks/gist_loss.h) shares steps 1 to 3 (GradCacheLoss).
// Thread-safety: an immutable static; the functions use the model from one thread.
#ifndef TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include <torch/types.h>

#include "trainer/data/task_data.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl;

// Rows [begin, begin + n) of `t`, cut to their longest text.
TextBatch MiniBatchRows(const TextBatch& t, int64_t begin, int64_t n);

// Steps 1 to 3 above for any loss over the embeddings of `texts` (each of `n` rows): `loss_of`
// gets every text batch's embeddings [n, H], made `mini_batch` rows at a time without a graph.
// Without gradient mode, that value as is.
torch::Tensor GradCacheLoss(
    TaskModelImpl& model, const std::vector<TextBatch>& texts, int64_t n, int64_t mini_batch,
    const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& loss_of);

const LossKind& CachedMnrlLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CACHED_MNRL_LOSS_H_
