// Settings several losses share: task.loss_scale (cosent, angle, mnrl, cached_mnrl: the
// similarities are multiplied by it before the softmax; default 20, as sentence-transformers)
// and task.cached_mini_batch (cached_mnrl: how many texts go through the encoder at once with
// gradients; default 32, as sentence-transformers' mini_batch_size).
// Thread-safety: immutable values and stateless functions.
#ifndef TUNEFLEET_TRAINER_TASKS_LOSS_SETTINGS_H_
#define TUNEFLEET_TRAINER_TASKS_LOSS_SETTINGS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

inline constexpr double kDefaultLossScale = 20.0;
inline constexpr int64_t kDefaultCachedMiniBatch = 32;

class ScaleSettings : public TaskSettings {
 public:
  // mini_batch 0: the loss has no task.cached_mini_batch.
  ScaleSettings(double scale, int64_t mini_batch) : scale_(scale), mini_batch_(mini_batch) {}
  double scale() const { return scale_; }
  int64_t mini_batch() const { return mini_batch_; }
  std::vector<std::pair<std::string, std::string>> Values() const override;

 private:
  double scale_;
  int64_t mini_batch_;
};

// task.loss_scale (> 0, finite).
absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseLossScale(const ConfigMap& task);
// task.loss_scale and task.cached_mini_batch (>= 1).
absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseLossScaleAndMiniBatch(
    const ConfigMap& task);
// config.settings' scale and mini-batch, or the defaults.
double LossScaleOf(const TaskConfig& config);
int64_t MiniBatchOf(const TaskConfig& config);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_LOSS_SETTINGS_H_
