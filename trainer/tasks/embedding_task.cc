#include "trainer/tasks/embedding_task.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

EmbeddingTask::EmbeddingTask(const TaskConfig& config)
    : Task(config), dims_(config.matryoshka_dims), weights_(config.matryoshka_weights) {
  if (weights_.size() != dims_.size()) weights_.assign(dims_.size(), 1.0);
}

std::string EmbeddingTask::Describe() const {
  if (dims_.empty()) return DescribeLoss();
  std::vector<std::string> weights;
  for (double w : weights_) weights.push_back(ShortestNumber(w));
  return absl::StrCat(DescribeLoss(), ", in MatryoshkaLoss over dims ", absl::StrJoin(dims_, ", "),
                      " (weights ", absl::StrJoin(weights, ", "), ")");
}

std::vector<TextBatch> EmbeddingTask::Texts(const TaskBatch& batch) {
  std::vector<TextBatch> texts = {batch.first};
  if (batch.second.input_ids.defined()) texts.push_back(batch.second);
  texts.insert(texts.end(), batch.negatives.begin(), batch.negatives.end());
  return texts;
}

torch::Tensor EmbeddingTask::Loss(TaskModelImpl& model, const TaskBatch& batch) const {
  return MatryoshkaLossOn(model, model.EmbedAll(Texts(batch)), batch);
}

torch::Tensor EmbeddingTask::MatryoshkaLossOn(TaskModelImpl& model,
                                              const std::vector<torch::Tensor>& embeddings,
                                              const TaskBatch& batch) const {
  if (dims_.empty()) return LossOn(model, embeddings, batch);
  torch::Tensor total;
  for (size_t i = 0; i < dims_.size(); ++i) {
    std::vector<torch::Tensor> truncated;
    for (const torch::Tensor& e : embeddings) {
      truncated.push_back(e.narrow(1, 0, dims_[i]));  // dims <= the width: run_setup checks
    }
    const torch::Tensor loss = LossOn(model, truncated, batch) * weights_[i];
    total = total.defined() ? total + loss : loss;
  }
  return total;
}

}  // namespace trainer
}  // namespace tunefleet
