// When a training run evaluates, and under which key it reports: the rule
// trainer/train/train_loop.h documents ("Evaluation points and their keys"), as pure functions of
// the run's shape, so that every rank of a data-parallel run and a resumed run take the same
// decisions.
//
//   N = shard * world, shard = ceil(train_size / world)      (samples of an epoch, all ranks)
//   SamplesSeen(epoch, b) = epoch * N + world * min(b * batch_size, shard)
//
// The cadence is one of (at most one of the three is > 0; none: only the last step evaluates):
//   every_steps K:   the step s evaluates when s % K == 0; its key is its samples_seen;
//   every_samples S: targets S, 2S, 3S, ...;
//   every_epochs f:  targets llround(j * f * N) for j = 1, 2, ... (computed in double, left to
//                    right: (j * f) * N).
// With targets, the step that takes samples_seen from `before` to `after` evaluates when a
// target t lies in (before, after]; its key is the largest target <= after (one evaluation,
// one key, however many targets the step crossed). The last step's evaluation is the caller's
// business (train_loop.cc keys it by its samples_seen).
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_TRAIN_EVAL_SCHEDULE_H_
#define TUNEFLEET_TRAINER_TRAIN_EVAL_SCHEDULE_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {

class EvalSchedule {
 public:
  // The schedule of a run on `train_size` examples over `world` ranks with train's batch_size
  // and cadence (eval_every_steps, eval_every_samples, eval_every_epochs). InvalidArgument
  // naming the keys when more than one cadence is > 0 or one is negative (or not finite), or
  // when train_size, world or batch_size is < 1.
  static absl::StatusOr<EvalSchedule> Make(const TrainConfig& train, int64_t train_size,
                                           int64_t world);

  // N: the samples of an epoch across all ranks (DistributedSampler pads by repetition).
  int64_t epoch_samples() const { return shard_ * world_; }
  // Samples seen across all ranks once `batch_in_epoch` batches of epoch `epoch` (0-based) are
  // done; SamplesSeen(e, batches_per_epoch) == SamplesSeen(e + 1, 0) == (e + 1) * N.
  int64_t SamplesSeen(int64_t epoch, int64_t batch_in_epoch) const;

  // The key of the evaluation of step `step` (1-based), which took samples_seen from `before`
  // to `after` (before < after), or nullopt when that step does not evaluate by the cadence.
  std::optional<int64_t> KeyAt(int64_t step, int64_t before, int64_t after) const;

  // Sample cadences only (nullopt otherwise): the largest target <= samples (nullopt when
  // none is), and the first target > samples.
  std::optional<int64_t> LastTargetAtOrBelow(int64_t samples) const;
  std::optional<int64_t> NextTargetAfter(int64_t samples) const;

 private:
  EvalSchedule() = default;
  bool by_samples() const { return every_samples_ > 0 || every_epochs_ > 0; }
  // The j-th target (j >= 1) of a sample cadence; 0 for j <= 0.
  int64_t Target(int64_t j) const;
  // The number of targets j >= 1 with Target(j) <= samples.
  int64_t TargetsAtOrBelow(int64_t samples) const;

  int64_t world_ = 1;
  int64_t shard_ = 0;
  int64_t batch_size_ = 1;
  int64_t every_steps_ = 0;
  int64_t every_samples_ = 0;
  double every_epochs_ = 0;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_EVAL_SCHEDULE_H_
