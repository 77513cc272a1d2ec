#include "trainer/tasks/cosent_loss.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/loss_settings.h"
#include "trainer/tasks/losses.h"

namespace tunefleet {
namespace trainer {
namespace {

class CoSentTask : public EmbeddingTask {
 public:
  CoSentTask(const TaskConfig& config, bool angle)
      : EmbeddingTask(config), angle_(angle), scale_(LossScaleOf(config)) {}
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    const torch::Tensor u = e[0].to(torch::kFloat), v = e[1].to(torch::kFloat);
    return CoSentLoss(angle_ ? PairwiseAngle(u, v) : PairwiseCosine(u, v), batch.scores, scale_);
  }

 protected:
  std::string DescribeLoss() const override {
    return absl::StrCat(angle_ ? "AnglELoss" : "CoSENTLoss", " (scale ", ShortestNumber(scale_),
                        ")");
  }

 private:
  bool angle_;
  double scale_;
};

TaskPtr BuildCoSent(const TaskConfig& config) {
  return std::make_shared<CoSentTask>(config, false);
}
TaskPtr BuildAngle(const TaskConfig& config) { return std::make_shared<CoSentTask>(config, true); }

}  // namespace

const LossKind& CoSentLossKind() {
  static const LossKind* const kKind = new LossKind{
      "cosent", {"sts", "contrastive"}, {"loss_scale"}, true, &ParseLossScale, &BuildCoSent};
  return *kKind;
}

const LossKind& AnglELossKind() {
  static const LossKind* const kKind = new LossKind{"angle", {"sts", "contrastive"}, {"loss_scale"},
                                                    true,    &ParseLossScale,        &BuildAngle};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
