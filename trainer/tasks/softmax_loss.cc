#include "trainer/tasks/softmax_loss.h"

#include <memory>

#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

// nli: SoftmaxLoss over the pair's embeddings.
class PairSoftmaxTask : public Task {
 public:
  using Task::Task;
  std::string Describe() const override { return "SoftmaxLoss (Linear(3H, K) on [u; v; |u - v|])"; }
  bool has_head() const override { return true; }
  torch::nn::Linear MakeHead(int64_t hidden, int64_t num_labels) const override {
    return torch::nn::Linear(3 * hidden, num_labels);
  }
  torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const override {
    const auto [u, v] = model.EmbedPair(batch.first, batch.second);
    return model.classifier()(torch::cat({u, v, torch::abs(u - v)}, 1));
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    return ClassificationLoss(model.Logits(batch).to(torch::kFloat), batch.labels);
  }
};

// classification: a cross-encoder's head on the pooler.
class ClassificationTask : public CrossEncoderTask {
 public:
  using CrossEncoderTask::CrossEncoderTask;
  std::string Describe() const override {
    return "cross entropy (BertForSequenceClassification's head on the pooler)";
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    return ClassificationLoss(model.Logits(batch).to(torch::kFloat), batch.labels);
  }
};

TaskPtr Build(const TaskConfig& config) {
  if (config.type == "classification") return std::make_shared<ClassificationTask>(config);
  return std::make_shared<PairSoftmaxTask>(config);
}

}  // namespace

const LossKind& CeLossKind() {
  static const LossKind* const kKind =
      new LossKind{"ce",
                   {"classification"},
                   {"num_labels"},
                   /*embeddings=*/false,
                   nullptr,
                   [](const TaskConfig& config) -> TaskPtr {
                     return std::make_shared<ClassificationTask>(config);
                   }};
  return *kKind;
}

const LossKind& SoftmaxLossKind() {
  static const LossKind* const kKind = new LossKind{
      "softmax", {"nli", "classification"}, {"num_labels"}, /*embeddings=*/false, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
