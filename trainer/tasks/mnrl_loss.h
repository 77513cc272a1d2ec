// task.loss mnrl: sentence-transformers' MultipleNegativesRankingLoss on (anchor, positive,
// negative...) rows (task.type mnrl): cross_entropy(scale * cos(a_i, c_j), i) where the
// candidates c are every positive of the batch, then every hard negative column; rows of a pair
// file labelled 0 are dropped. Under data parallelism with task.mnrl_gather (the default) every
// rank's candidates are all-gathered with gradients, so each anchor sees the global batch's, as
// one process would. Its setting: task.loss_scale (default 20). No head. Texts repeated in a
// batch are false negatives: train.batch_sampler defaults to no_duplicates.
// Thread-safety: an immutable static; MnrlOn is stateless.
#ifndef TUNEFLEET_TRAINER_TASKS_MNRL_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_MNRL_LOSS_H_

#include <string>
#include <vector>

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

// The loss over embeddings [B, H] each: anchors, positives, then each negative column; `gather`:
// candidates from every rank of the model's process group (if it has one).
torch::Tensor MnrlOn(TaskModelImpl& model, const std::vector<torch::Tensor>& embeddings,
                     double scale, bool gather);
// "MultipleNegativesRankingLoss (scale 20, candidates gathered from all ranks)", with `extra`
// (", mini-batch 32") before the closing parenthesis.
std::string DescribeMnrl(const char* name, double scale, bool gather,
                         const std::string& extra = "");

const LossKind& MnrlLossKind();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_MNRL_LOSS_H_
