// task.loss contrastive (the default of task.type contrastive): sentence-transformers'
// OnlineContrastiveLoss (as sentence_transformers/losses/OnlineContrastiveLoss.py at
// UKPLab/sentence-transformers commit 005f3f4f; the forward is the same in v2.x and v3.x) on pairs
// labelled 1 (similar) or 0 (not), e.g. paws-wiki (format paws). With d = 1 - cos(pool(a), pool(b))
// (COSINE_DISTANCE) over a batch:
//   hard positives: positive pairs with d > min(d of the negatives) (with fewer than two
//                   negatives: > mean(d of the positives));
//   hard negatives: negative pairs with d < max(d of the positives) (with fewer than two
//                   positives: < mean(d of the negatives));
//   loss = sum over hard positives of d^2 + sum over hard negatives of relu(margin - d)^2
// (a sum, not a mean, as the reference). Evaluated by the similarity of each pair against its
// label (Spearman of the cosine with 0/1). No head. Its one setting:
//   task.margin   how far apart negatives should be, in cosine distance; > 0, default 0.5
// Thread-safety: stateless functions and an immutable static.
#ifndef TUNEFLEET_TRAINER_TASKS_CONTRASTIVE_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_CONTRASTIVE_LOSS_H_

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

inline constexpr double kContrastiveMargin = 0.5;

// u, v: [B, H] (any float dtype; computed in float32); labels: [B] integers 0 or 1. Fixed shapes
// throughout (no data-dependent indexing), so a step with it can be captured as a CUDA graph.
torch::Tensor OnlineContrastiveLoss(const torch::Tensor& u, const torch::Tensor& v,
                                    const torch::Tensor& labels,
                                    double margin = kContrastiveMargin);

const LossKind& ContrastiveLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CONTRASTIVE_LOSS_H_
