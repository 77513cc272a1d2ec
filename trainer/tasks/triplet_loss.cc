#include "trainer/tasks/triplet_loss.h"

#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class MarginSettings : public TaskSettings {
 public:
  explicit MarginSettings(double margin) : margin_(margin) {}
  double margin() const { return margin_; }
  std::vector<std::pair<std::string, std::string>> Values() const override {
    return {{"margin", ShortestNumber(margin_)}};
  }

 private:
  double margin_;
};

class TripletTask : public EmbeddingTask {
 public:
  TripletTask(const TaskConfig& config, double margin) : EmbeddingTask(config), margin_(margin) {}
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch&) const override {
    TORCH_CHECK(e.size() == 3, "task.loss triplet takes (anchor, positive, negative) rows, got ",
                e.size(), " text columns");
    return TripletLoss(e[0], e[1], e[2], margin_);
  }

 protected:
  std::string DescribeLoss() const override {
    return absl::StrCat("TripletLoss (euclidean, margin ", ShortestNumber(margin_), ")");
  }

 private:
  double margin_;
};

absl::StatusOr<std::shared_ptr<const TaskSettings>> Parse(const ConfigMap& task) {
  double margin = kTripletMargin;
  RETURN_IF_ERROR(task.GetOptional("margin", &margin));
  if (!std::isfinite(margin) || margin <= 0) {
    return task.Error("margin", absl::StrCat("must be a number > 0, got ", margin));
  }
  return std::make_shared<const MarginSettings>(margin);
}

TaskPtr Build(const TaskConfig& config) {
  const auto* settings = dynamic_cast<const MarginSettings*>(config.settings.get());
  return std::make_shared<TripletTask>(config,
                                       settings != nullptr ? settings->margin() : kTripletMargin);
}

}  // namespace

torch::Tensor TripletLoss(const torch::Tensor& anchors, const torch::Tensor& positives,
                          const torch::Tensor& negatives, double margin) {
  const torch::Tensor a = anchors.to(torch::kFloat);
  const torch::Tensor d_pos = torch::pairwise_distance(a, positives.to(torch::kFloat), 2.0, 1e-6);
  const torch::Tensor d_neg = torch::pairwise_distance(a, negatives.to(torch::kFloat), 2.0, 1e-6);
  return torch::relu(d_pos - d_neg + margin).mean();
}

const LossKind& TripletLossKind() {
  static const LossKind* const kKind =
      new LossKind{"triplet", {"mnrl"}, {"margin"}, /*embeddings=*/true, &Parse, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
