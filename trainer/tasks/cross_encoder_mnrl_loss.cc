#include "trainer/tasks/cross_encoder_mnrl_loss.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/cross_encoder_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class Settings : public TaskSettings {
 public:
  Settings(double scale, int64_t negatives) : scale_(scale), negatives_(negatives) {}
  double scale() const { return scale_; }
  int64_t negatives() const { return negatives_; }
  std::vector<std::pair<std::string, std::string>> Values() const override {
    return {{"loss_scale", ShortestNumber(scale_)}, {"num_negatives", absl::StrCat(negatives_)}};
  }

 private:
  double scale_;
  int64_t negatives_;
};

class CrossEncoderMnrl : public CrossEncoderTask {
 public:
  CrossEncoderMnrl(const TaskConfig& config, double scale, int64_t negatives)
      : CrossEncoderTask(config), scale_(scale), negatives_(negatives) {
    mutable_train_data().pair_grid = true;
    mutable_train_data().grid_negatives = negatives;
  }
  std::string Describe() const override {
    return absl::StrCat("MultipleNegativesRankingLoss (cross-encoder: sigmoid x ",
                        ShortestNumber(scale_), ", ",
                        negatives_ == 0 ? std::string("every in-batch candidate")
                                        : absl::StrCat(negatives_, " in-batch candidates drawn"),
                        " per anchor)");
  }
  bool in_batch_negatives() const override { return true; }
  bool builds_pairs() const override { return true; }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const torch::Tensor logits = CrossEncoderLogits(model, batch.first).to(torch::kFloat);
    TORCH_CHECK(logits.size(1) == 1, "task.loss mnrl needs a one-output head, this one has ",
                logits.size(1));
    const torch::Tensor scores = torch::sigmoid(logits.view({batch.size, -1})) * scale_;
    return torch::cross_entropy_loss(
        scores, torch::zeros({batch.size}, torch::dtype(torch::kLong).device(scores.device())));
  }

 private:
  double scale_;
  int64_t negatives_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseCrossEncoderMnrl(const ConfigMap& task) {
  double scale = kCrossEncoderMnrlScale;
  RETURN_IF_ERROR(task.GetOptional("loss_scale", &scale));
  if (!std::isfinite(scale) || scale <= 0) {
    return task.Error("loss_scale", absl::StrCat("must be a number > 0, got ", scale));
  }
  int64_t negatives = kCrossEncoderMnrlNegatives;
  RETURN_IF_ERROR(task.GetOptional("num_negatives", &negatives));
  if (negatives < 0) {
    return task.Error("num_negatives",
                      absl::StrCat("must be >= 0 (0: every in-batch candidate), got ", negatives));
  }
  return std::make_shared<const Settings>(scale, negatives);
}

TaskPtr BuildCrossEncoderMnrl(const TaskConfig& config) {
  const auto* s = dynamic_cast<const Settings*>(config.settings.get());
  return std::make_shared<CrossEncoderMnrl>(config, s ? s->scale() : kCrossEncoderMnrlScale,
                                            s ? s->negatives() : kCrossEncoderMnrlNegatives);
}

}  // namespace trainer
}  // namespace tunefleet
