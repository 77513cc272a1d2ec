#include "trainer/tasks/margin_mse_loss.h"

#include <memory>
#include <vector>

#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

torch::Tensor MarginMse(const torch::Tensor& positive, const std::vector<torch::Tensor>& negatives,
                        const torch::Tensor& targets) {
  TORCH_CHECK(!negatives.empty(), "task.loss margin_mse needs a negative on every row");
  const torch::Tensor margins = positive.unsqueeze(1) - torch::stack(negatives, 1);
  return torch::mse_loss(margins.to(torch::kFloat), targets);
}

class BiEncoderMarginMse : public EmbeddingTask {
 public:
  using EmbeddingTask::EmbeddingTask;
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    std::vector<torch::Tensor> negatives;
    for (size_t k = 2; k < e.size(); ++k) negatives.push_back((e[0] * e[k]).sum(-1));
    return MarginMse((e[0] * e[1]).sum(-1), negatives, batch.targets);
  }

 protected:
  std::string DescribeLoss() const override {
    return "MarginMSELoss (dot(q, p) - dot(q, n) against the teacher's margin)";
  }
};

class CrossEncoderMarginMse : public CrossEncoderTask {
 public:
  using CrossEncoderTask::CrossEncoderTask;
  std::string Describe() const override {
    return "MarginMSELoss (cross-encoder: logit(q, p) - logit(q, n) against the teacher's "
           "margin)";
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    std::vector<torch::Tensor> negatives;
    for (const TextBatch& n : batch.negatives) {
      negatives.push_back(CrossEncoderLogits(model, n).select(1, 0));
    }
    return MarginMse(CrossEncoderLogits(model, batch.first).select(1, 0), negatives, batch.targets);
  }
};

TaskPtr Build(const TaskConfig& config) {
  if (config.type == "cross_encoder_margin") {
    return std::make_shared<CrossEncoderMarginMse>(config);
  }
  return std::make_shared<BiEncoderMarginMse>(config);
}

}  // namespace

const LossKind& MarginMseLossKind() {
  static const LossKind* const kKind = new LossKind{
      "margin_mse", {"margin", "cross_encoder_margin"}, {}, /*embeddings=*/false, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
