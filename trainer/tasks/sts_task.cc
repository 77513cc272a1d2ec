#include "trainer/tasks/sts_task.h"

#include <memory>

#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class StsTask : public Task {
 public:
  std::string type() const override { return "sts"; }
  std::string Describe() const override { return "CosineSimilarityLoss"; }
  DataKind train_data() const override { return {"sts", RowTarget::kScore, false}; }
  Evaluation evaluation() const override { return Evaluation::kSimilarity; }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const auto [u, v] = model.EmbedPair(batch.first, batch.second);
    return CosineSimilarityLoss(u, v, batch.scores);
  }
};

TaskPtr Build(const TaskConfig&) { return std::make_shared<StsTask>(); }

}  // namespace

const LossKind& StsLossKind() {
  static const LossKind* const kKind = new LossKind{"sts", {}, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
