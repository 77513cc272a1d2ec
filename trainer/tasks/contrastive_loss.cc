#include "trainer/tasks/contrastive_loss.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/functional/distance.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

torch::Tensor OnlineContrastiveLoss(const torch::Tensor& u, const torch::Tensor& v,
                                    const torch::Tensor& labels, double margin) {
  namespace F = torch::nn::functional;
  const torch::Tensor d = 1 - F::cosine_similarity(u.to(torch::kFloat), v.to(torch::kFloat),
                                                   F::CosineSimilarityFuncOptions().dim(1));
  const torch::Tensor pos = labels.eq(1), neg = labels.eq(0);
  const torch::Tensor n_pos = pos.sum(), n_neg = neg.sum();
  const double inf = std::numeric_limits<double>::infinity();
  const torch::Tensor zero = torch::zeros_like(d);
  // The thresholds carry no gradient, as the reference's comparisons carry none.
  const torch::Tensor dd = d.detach();
  const torch::Tensor poss_max = torch::where(pos, dd, torch::full_like(dd, -inf)).max();
  const torch::Tensor negs_min = torch::where(neg, dd, torch::full_like(dd, inf)).min();
  const torch::Tensor poss_mean = torch::where(pos, dd, zero).sum() / n_pos;  // NaN without any
  const torch::Tensor negs_mean = torch::where(neg, dd, zero).sum() / n_neg;
  const torch::Tensor negative_below = torch::where(n_pos > 1, poss_max, negs_mean);
  const torch::Tensor positive_above = torch::where(n_neg > 1, negs_min, poss_mean);
  const torch::Tensor hard_pos = pos.logical_and(dd > positive_above);
  const torch::Tensor hard_neg = neg.logical_and(dd < negative_below);
  const torch::Tensor positive_loss = torch::where(hard_pos, d.pow(2), zero).sum();
  const torch::Tensor negative_loss =
      torch::where(hard_neg, torch::relu(margin - d).pow(2), zero).sum();
  return positive_loss + negative_loss;
}

namespace {

class ContrastiveSettings : public TaskSettings {
 public:
  explicit ContrastiveSettings(double margin) : margin_(margin) {}
  double margin() const { return margin_; }
  std::vector<std::pair<std::string, std::string>> Values() const override {
    return {{"margin", ShortestNumber(margin_)}};
  }

 private:
  double margin_;
};

class ContrastiveTask : public EmbeddingTask {
 public:
  ContrastiveTask(const TaskConfig& config, double margin)
      : EmbeddingTask(config), margin_(margin) {}
  torch::Tensor LossOn(TaskModelImpl&, const std::vector<torch::Tensor>& e,
                       const TaskBatch& batch) const override {
    return OnlineContrastiveLoss(e[0], e[1], batch.labels, margin_);
  }

 protected:
  std::string DescribeLoss() const override {
    return absl::StrCat("OnlineContrastiveLoss (margin ", ShortestNumber(margin_),
                        ", cosine distance)");
  }

 private:
  double margin_;
};

absl::StatusOr<std::shared_ptr<const TaskSettings>> Parse(const ConfigMap& task) {
  double margin = kContrastiveMargin;
  RETURN_IF_ERROR(task.GetOptional("margin", &margin));
  if (!std::isfinite(margin) || margin <= 0) {
    return task.Error("margin", absl::StrCat("must be a number > 0, got ", margin));
  }
  return std::make_shared<const ContrastiveSettings>(margin);
}

TaskPtr Build(const TaskConfig& config) {
  const auto* settings = dynamic_cast<const ContrastiveSettings*>(config.settings.get());
  return std::make_shared<ContrastiveTask>(
      config, settings != nullptr ? settings->margin() : kContrastiveMargin);
}

}  // namespace

const LossKind& ContrastiveLossKind() {
  static const LossKind* const kKind =
      new LossKind{"contrastive", {"contrastive"}, {"margin"}, /*embeddings=*/true, &Parse, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
