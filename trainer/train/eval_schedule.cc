#include "trainer/train/eval_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr int64_t kMaxSamples = std::numeric_limits<int64_t>::max() / 4;

// The cadence keys set > 0, in the order the YAML documents them.
std::vector<std::string> ActiveCadences(const TrainConfig& t) {
  std::vector<std::string> on;
  if (t.eval_every_steps > 0) on.push_back("eval_every_steps");
  if (t.eval_every_samples > 0) on.push_back("eval_every_samples");
  if (t.eval_every_epochs > 0) on.push_back("eval_every_epochs");
  return on;
}

}  // namespace

absl::StatusOr<EvalSchedule> EvalSchedule::Make(const TrainConfig& train, int64_t train_size,
                                                int64_t world) {
  if (train_size < 1 || world < 1 || train.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("evaluation schedule: need >= 1 training example, rank and batch size, got ",
                     train_size, ", ", world, ", ", train.batch_size));
  }
  if (train.eval_every_steps < 0 || train.eval_every_samples < 0 ||
      !(train.eval_every_epochs >= 0) || !std::isfinite(train.eval_every_epochs)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "train.eval_every_steps, eval_every_samples and eval_every_epochs must be >= 0, got ",
        train.eval_every_steps, ", ", train.eval_every_samples, ", ", train.eval_every_epochs));
  }
  const std::vector<std::string> on = ActiveCadences(train);
  if (on.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("train.", on[0], " and train.", on[1], " are both > 0: set at most one"));
  }
  EvalSchedule s;
  s.world_ = world;
  s.shard_ = (train_size + world - 1) / world;
  s.batch_size_ = train.batch_size;
  s.every_steps_ = train.eval_every_steps;
  s.every_samples_ = train.eval_every_samples;
  s.every_epochs_ = train.eval_every_epochs;
  return s;
}

int64_t EvalSchedule::SamplesSeen(int64_t epoch, int64_t batch_in_epoch) const {
  // min(b * batch, shard) without overflowing b * batch.
  const int64_t in_epoch = batch_in_epoch >= (shard_ + batch_size_ - 1) / batch_size_
                               ? shard_
                               : std::min(batch_in_epoch * batch_size_, shard_);
  return epoch * epoch_samples() + world_ * in_epoch;
}

int64_t EvalSchedule::Target(int64_t j) const {
  if (j <= 0) return 0;
  if (every_samples_ > 0) {
    return j > kMaxSamples / every_samples_ ? kMaxSamples : j * every_samples_;
  }
  const double t = static_cast<double>(j) * every_epochs_ * static_cast<double>(epoch_samples());
  return t >= static_cast<double>(kMaxSamples) ? kMaxSamples : std::llround(t);
}

int64_t EvalSchedule::TargetsAtOrBelow(int64_t samples) const {
  if (samples < 0) return 0;
  if (every_samples_ > 0) return samples / every_samples_;
  // llround(x) <= samples iff x < samples + 0.5: about (samples + 0.5) / (f * N) targets; the
  // estimate is then corrected against Target() itself (rounding of j * f * N).
  const double step = every_epochs_ * static_cast<double>(epoch_samples());
  const double estimate = std::floor((static_cast<double>(samples) + 0.5) / step);
  int64_t j = estimate >= static_cast<double>(kMaxSamples)
                  ? kMaxSamples
                  : static_cast<int64_t>(std::max(0.0, estimate));
  while (j > 0 && Target(j) > samples) --j;
  while (j < kMaxSamples && Target(j + 1) <= samples) ++j;
  return j;
}

std::optional<int64_t> EvalSchedule::LastTargetAtOrBelow(int64_t samples) const {
  if (!by_samples()) return std::nullopt;
  const int64_t j = TargetsAtOrBelow(samples);
  if (j == 0) return std::nullopt;
  return Target(j);
}

std::optional<int64_t> EvalSchedule::NextTargetAfter(int64_t samples) const {
  if (!by_samples()) return std::nullopt;
  return Target(TargetsAtOrBelow(samples) + 1);
}

std::optional<int64_t> EvalSchedule::KeyAt(int64_t step, int64_t before, int64_t after) const {
  if (every_steps_ > 0) {
    if (step % every_steps_ == 0) return after;
    return std::nullopt;
  }
  if (!by_samples()) return std::nullopt;
  // A target in (before, after] exists iff the first target > before is <= after.
  if (*NextTargetAfter(before) > after) return std::nullopt;
  return LastTargetAtOrBelow(after);
}

}  // namespace trainer
}  // namespace tunefleet
