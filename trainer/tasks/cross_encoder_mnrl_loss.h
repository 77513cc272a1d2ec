// task.loss mnrl for a cross-encoder (task type cross_encoder_mnrl): sentence-transformers'
// cross_encoder.losses.MultipleNegativesRankingLoss. Rows (anchor, positive, negative...); each
// anchor is scored as one text with its positive, with task.num_negatives texts drawn from the
// other rows' positives and negatives (default 4, as sentence-transformers; 0: all of them,
// (rows - 1) x candidate columns) and with its own negatives (trainer/data/task_data.h,
// pair_grid). The value is the cross entropy of sigmoid(logit) * task.loss_scale (default 10)
// over each anchor's candidates, the positive being the target. The in-batch draw is seeded by
// the batch's rows, not by sentence-transformers' torch.multinomial: runs with the default
// compare in distribution, and num_negatives 0 compares value for value.
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_MNRL_LOSS_H_
#define TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_MNRL_LOSS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "trainer/config/train_config.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

inline constexpr double kCrossEncoderMnrlScale = 10.0;
inline constexpr int64_t kCrossEncoderMnrlNegatives = 4;

// task.loss_scale (> 0) and task.num_negatives (>= 0) for task type cross_encoder_mnrl.
absl::StatusOr<std::shared_ptr<const TaskSettings>> ParseCrossEncoderMnrl(const ConfigMap& task);
TaskPtr BuildCrossEncoderMnrl(const TaskConfig& config);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_MNRL_LOSS_H_
