#include "trainer/tasks/cosine_loss.h"

#include <memory>

#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/losses.h"

namespace tunefleet {
namespace trainer {
namespace {

class CosineTask : public EmbeddingTask {
 public:
  using EmbeddingTask::EmbeddingTask;
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    return CosineSimilarityLoss(e[0], e[1], batch.scores);
  }

 protected:
  std::string DescribeLoss() const override { return "CosineSimilarityLoss"; }
};

TaskPtr Build(const TaskConfig& config) { return std::make_shared<CosineTask>(config); }

}  // namespace

const LossKind& CosineLossKind() {
  static const LossKind* const kKind =
      new LossKind{"cosine", {"sts", "contrastive"}, {}, /*embeddings=*/true, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
