#include "trainer/tasks/nli_task.h"

#include <memory>

#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class NliTask : public Task {
 public:
  std::string type() const override { return "nli"; }
  std::string Describe() const override { return "SoftmaxLoss (Linear(3H, K) on [u; v; |u - v|])"; }
  DataKind train_data() const override { return {"nli", RowTarget::kLabel, false}; }
  Evaluation evaluation() const override { return Evaluation::kAccuracy; }
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

TaskPtr Build(const TaskConfig&) { return std::make_shared<NliTask>(); }

}  // namespace

const LossKind& NliLossKind() {
  static const LossKind* const kKind = new LossKind{"nli", {"num_labels"}, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
