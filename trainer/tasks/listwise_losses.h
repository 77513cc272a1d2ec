// task.loss lambda and listnet (task type cross_encoder_list): sentence-transformers'
// cross_encoder.losses.LambdaLoss (its defaults: NDCGLoss2PPScheme with mu 10, sigma 1, k all
// documents, eps 1e-10, binary log) and ListNetLoss, on rows of a query, its documents and one
// relevance each (trainer/data/task_data.h, kList; `trainer mine --output_format labeled-list`
// writes them). Every (query, document) is scored as one text by a one-output head (activation
// Identity); the scores of a batch are laid out [rows, most documents], a row's missing
// documents at -1e16 and their relevances at -inf, as sentence-transformers does, so that
// they take no part:
//   listnet  the cross entropy of the scores against softmax(relevances), mean over rows
//   lambda   -mean over ordered pairs (i ranked above j by the scores, relevance i > j) of
//            log2(sigmoid(s_i - s_j) ^ w_ij), w_ij the NDCGLoss2++ weights of the gains
//            (2^rel - 1) / maxDCG and discounts log2(1 + rank)
// Thread-safety: immutable statics.
#ifndef TUNEFLEET_TRAINER_TASKS_LISTWISE_LOSSES_H_
#define TUNEFLEET_TRAINER_TASKS_LISTWISE_LOSSES_H_

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

const LossKind& LambdaLossKind();
const LossKind& ListNetLossKind();

// The layout both take: `logits` [sum of sizes] in row order into [rows, max size], the rest
// -1e16.
torch::Tensor ListMatrix(const torch::Tensor& logits, const std::vector<int64_t>& sizes);
// The values on a batch's score matrix and relevances ([rows, L], padding -inf).
torch::Tensor LambdaLossOn(const torch::Tensor& scores, const torch::Tensor& relevances);
torch::Tensor ListNetLossOn(const torch::Tensor& scores, const torch::Tensor& relevances);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_LISTWISE_LOSSES_H_
