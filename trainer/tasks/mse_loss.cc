#include "trainer/tasks/mse_loss.h"

#include <memory>
#include <vector>

#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class BiEncoderMse : public EmbeddingTask {
 public:
  using EmbeddingTask::EmbeddingTask;
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    TORCH_CHECK(e[0].size(1) == batch.targets.size(1), "task.loss mse: the embeddings are ",
                e[0].size(1), " wide, the labels (the teacher's embeddings) ",
                batch.targets.size(1));
    return torch::mse_loss(e[0].to(torch::kFloat), batch.targets);
  }

 protected:
  std::string DescribeLoss() const override {
    return "MSELoss (the embedding against the teacher's)";
  }
};

class CrossEncoderMse : public CrossEncoderTask {
 public:
  using CrossEncoderTask::CrossEncoderTask;
  std::string Describe() const override {
    return "MSELoss (cross-encoder: the one-output head's logit against the score)";
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const torch::Tensor logits = model.Logits(batch).to(torch::kFloat);
    TORCH_CHECK(logits.size(1) == 1, "task.loss mse needs a one-output head, this one has ",
                logits.size(1));
    return torch::mse_loss(logits.view({-1}), batch.scores);
  }
};

TaskPtr Build(const TaskConfig& config) {
  if (config.type == "cross_encoder") return std::make_shared<CrossEncoderMse>(config);
  return std::make_shared<BiEncoderMse>(config);
}

}  // namespace

const LossKind& MseLossKind() {
  static const LossKind* const kKind = new LossKind{
      "mse", {"embedding", "cross_encoder"}, {}, /*embeddings=*/false, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
