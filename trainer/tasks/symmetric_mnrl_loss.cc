#include "trainer/tasks/symmetric_mnrl_loss.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/loss_settings.h"
#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class SymmetricMnrlTask : public EmbeddingTask {
 public:
  explicit SymmetricMnrlTask(const TaskConfig& config)
      : EmbeddingTask(config), scale_(LossScaleOf(config)) {}
  bool in_batch_negatives() const override { return true; }
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch&) const override {
    std::vector<torch::Tensor> candidates(e.begin() + 1, e.end());
    return SymmetricMnrl(e[0], candidates.size() == 1 ? candidates[0] : torch::cat(candidates),
                         scale_);
  }

 protected:
  std::string DescribeLoss() const override {
    return absl::StrCat("MultipleNegativesSymmetricRankingLoss (scale ", ShortestNumber(scale_),
                        ", this rank's candidates)");
  }

 private:
  double scale_;
};

TaskPtr Build(const TaskConfig& config) { return std::make_shared<SymmetricMnrlTask>(config); }

}  // namespace

torch::Tensor SymmetricMnrl(const torch::Tensor& anchors, const torch::Tensor& candidates,
                            double scale) {
  const int64_t b = anchors.size(0);
  const torch::Tensor forward =
      CosineSimilarityMatrix(anchors.to(torch::kFloat), candidates.to(torch::kFloat)) * scale;
  const torch::Tensor labels = torch::arange(b, forward.options().dtype(torch::kLong));
  const torch::Tensor backward = forward.narrow(1, 0, b).t();
  return (torch::cross_entropy_loss(forward, labels) +
          torch::cross_entropy_loss(backward, labels)) /
         2;
}

const LossKind& SymmetricMnrlLossKind() {
  static const LossKind* const kKind = new LossKind{
      "symmetric_mnrl", {"mnrl"}, {"loss_scale"}, /*embeddings=*/true, &ParseLossScale, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
