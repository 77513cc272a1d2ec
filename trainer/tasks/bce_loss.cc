#include "trainer/tasks/bce_loss.h"

#include <memory>

#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class BceTask : public CrossEncoderTask {
 public:
  using CrossEncoderTask::CrossEncoderTask;
  std::string Describe() const override {
    return "BinaryCrossEntropyLoss (BCE with logits of a one-output head on the pooler)";
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const torch::Tensor logits = model.Logits(batch).to(torch::kFloat);
    TORCH_CHECK(logits.size(1) == 1, "task.loss bce needs a one-output head, this one has ",
                logits.size(1));
    return torch::binary_cross_entropy_with_logits(logits.view({-1}), batch.scores);
  }
};

TaskPtr Build(const TaskConfig& config) { return std::make_shared<BceTask>(config); }

}  // namespace

const LossKind& BceLossKind() {
  static const LossKind* const kKind =
      new LossKind{"bce", {"cross_encoder"}, {}, /*embeddings=*/false, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
