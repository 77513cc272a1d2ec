// task.loss gist and cached_gist: sentence-transformers' GISTEmbedLoss and CachedGISTEmbedLoss
// (Solatorio 2024) on the rows of task.type mnrl, (anchor, positive[, negatives...]). A frozen
// guide model (task.guide_model, a model folder) picks which in-batch negatives count: with the
// guide's cosines g and the model's s, anchor i's row of logits is
//   [s(a_i, p_j)]_j, [s(a_i, a_j)]_j, [s(p_i, p_j)]_j, [s(a_i, n_j)]_j for each negative column
// (anchor-anchor with task.contrast_anchors, positive-positive with task.contrast_positives),
// each over task.temperature, where a pair whose guide cosine g exceeds the guide's own
// g(a_i, p_i) - margin (margin_strategy absolute; relative: g(a_i, p_i) * (1 - margin)) is a
// probable false negative and set to -inf, p_i itself excepted; the loss is the cross entropy of
// each row against p_i. cached_gist gives the same value and gradients through GradCache
// (trainer/tasks/cached_mnrl_loss.h), task.cached_mini_batch texts at a time, model and guide
// alike. Settings: task.guide_model (required), task.temperature (default 0.01),
// task.margin_strategy (absolute), task.margin (0), task.contrast_anchors and
// task.contrast_positives (true); cached_gist also task.cached_mini_batch (32). No head.
//
// The guide is loaded once at set-up (Task::PrepareModel) into the model's loss module
// (TaskModelImpl::SetLossModule): its encoder in eval mode without gradients, on the model's
// device, under the step's autocast as the model; its pooling is its folder's
// (sentence-transformers' 1_Pooling, else mean). It reads the model's tokens, so its tokenizer
// must have the model's vocabulary (sentence-transformers would re-tokenize the texts); texts
// longer than its max_seq_length are cut to it, keeping their closing special tokens, as
// re-tokenizing with truncation would. Similarities are computed in float32 whatever the autocast.
// Under data parallelism each rank's loss is over its own batch (sentence-transformers' default,
// gather_across_devices false).
// Thread-safety: immutable statics; GistLoss is stateless.
#ifndef TUNEFLEET_TRAINER_TASKS_GIST_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_GIST_LOSS_H_

#include <vector>

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

struct GistOptions {
  double temperature = 0.01;
  bool relative = false;  // margin_strategy relative (else absolute)
  double margin = 0.0;
  bool contrast_anchors = true;
  bool contrast_positives = true;
};

// The loss over the model's embeddings `e` and the guide's `g` ([B, H] and [B, H'] each:
// anchors, positives, then each negative column).
torch::Tensor GistLoss(const std::vector<torch::Tensor>& e, const std::vector<torch::Tensor>& g,
                       const GistOptions& options);

const LossKind& GistLossKind();
const LossKind& CachedGistLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_GIST_LOSS_H_
