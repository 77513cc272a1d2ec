#include "trainer/tasks/loss_settings.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {
namespace {

absl::StatusOr<double> ReadScale(const ConfigMap& task) {
  double scale = kDefaultLossScale;
  RETURN_IF_ERROR(task.GetOptional("loss_scale", &scale));
  if (!std::isfinite(scale) || scale <= 0) {
    return task.Error("loss_scale", absl::StrCat("must be a number > 0, got ", scale));
  }
  return scale;
}

const ScaleSettings* Of(const TaskConfig& config) {
  return dynamic_cast<const ScaleSettings*>(config.settings.get());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ScaleSettings::Values() const {
  std::vector<std::pair<std::string, std::string>> values = {
      {"loss_scale", ShortestNumber(scale_)}};
  if (mini_batch_ > 0) values.emplace_back("cached_mini_batch", absl::StrCat(mini_batch_));
  return values;
}

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseLossScale(const ConfigMap& task) {
  ASSIGN_OR_RETURN(double scale, ReadScale(task));
  return std::make_shared<const ScaleSettings>(scale, 0);
}

absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseLossScaleAndMiniBatch(
    const ConfigMap& task) {
  ASSIGN_OR_RETURN(double scale, ReadScale(task));
  int64_t mini_batch = kDefaultCachedMiniBatch;
  RETURN_IF_ERROR(task.GetOptional("cached_mini_batch", &mini_batch));
  if (mini_batch < 1) {
    return task.Error("cached_mini_batch", absl::StrCat("must be >= 1, got ", mini_batch));
  }
  return std::make_shared<const ScaleSettings>(scale, mini_batch);
}

double LossScaleOf(const TaskConfig& config) {
  const ScaleSettings* s = Of(config);
  return s != nullptr ? s->scale() : kDefaultLossScale;
}

int64_t MiniBatchOf(const TaskConfig& config) {
  const ScaleSettings* s = Of(config);
  return s != nullptr && s->mini_batch() > 0 ? s->mini_batch() : kDefaultCachedMiniBatch;
}

}  // namespace trainer
}  // namespace tunefleet
