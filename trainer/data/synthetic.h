// The synthetic trainer: a documented, deterministic stand-in for training, so the whole
// machinery (sampling, scaling, dispatch, reporting, pruning, journaling) can be exercised in
// seconds. At each step s = 1..steps it reports, under the sweep's metric name,
//
//   value(s) = quality * (1 - exp(-s / tau)) + noise * z(seed, lr_effective, batch_size, s)
//
//   x       = log10(lr_effective / 3e-4)                   (distance from the best lr, decades)
//   quality = 0.9 * exp(-2 x^2) - 0.02 * log2(batch_size / 32)^2
//   tau     = clamp(4 * 10^(-x / 2), 1, 50)                 (larger lr learns faster)
//   z       = a standard normal draw seeded by (seed, lr_effective, batch_size, s)
//
// so the optimum is lr_effective = 3e-4 at batch 32, quality falls off smoothly in both, and the
// same trial configuration always yields the same curve. The final value is value(steps)
// (value(0) = noise only, for zero-step trials).
//
// The resource axis (Report.samples) is independent of batch_size: step s reports
// samples = s * samples_per_step, and the final report carries steps * samples_per_step.
#ifndef TUNEFLEET_TRAINER_DATA_SYNTHETIC_H_
#define TUNEFLEET_TRAINER_DATA_SYNTHETIC_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tunefleet {
namespace trainer {

struct SyntheticOptions {
  int64_t steps = 20;
  double seconds_per_step = 0.0;
  double noise = 0.0;
  int64_t seed = 0;
  double lr_effective = 3e-4;
  int64_t batch_size = 32;
  int64_t samples_per_step = 64;  // >= 1: each step's place on the samples axis
  std::string metric = "eval/spearman";
};

double SyntheticValue(const SyntheticOptions& options, int64_t step);

class AgentClient;

// Runs the synthetic trial: sleeps seconds_per_step per step, prints one JSON object a line on
// stdout ({"step": s, "samples": s * samples_per_step, METRIC: v}), and reports each step
// through `client` (when not null) at samples s * samples_per_step, stopping when told to; the
// last step is reported as the final value only (as the trainer's last evaluation is), and a
// zero-step trial reports value(0) at 0 samples. Under an agent only rank 0 has a
// client; the other ranks of a multi-rank trial run the same steps silently (a pruned trial's
// other ranks therefore end at their last step, not at the decision).
absl::Status RunSynthetic(const SyntheticOptions& options, AgentClient* client);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_SYNTHETIC_H_
