// MedianPruner: Optuna 3.1's MedianPruner (a PercentilePruner at the 50th percentile), decision
// for decision. When the RUNNING trial reports step s (its last, i.e. largest, step), it is
// pruned when all of these hold:
//   - at least max(1, n_startup_trials) trials are COMPLETE (no other state counts);
//   - s >= n_warmup_steps, and s is the trial's first report in its pruning interval (the
//     intervals are [w + k * interval_steps, w + (k + 1) * interval_steps));
//   - the trial's best intermediate value over all its steps (NaNs skipped) is NaN, i.e. every
//     value it reported is NaN: pruned at once; otherwise
//   - at least n_min_trials COMPLETE trials reported step s (NaN reports count here), and the
//     trial's best value is strictly worse than np.nanpercentile of their values at s (linear
//     interpolation, NaNs skipped; all NaN: never pruned).
// The study's direction (Study::maximize) says what "best" and "worse" mean.
//
// Thread-safety: used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_

#include <cstddef>
#include <vector>

#include "hpo/pruner.h"
#include "hpo/sweep_config.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class MedianPruner : public Pruner {
 public:
  // `spec` as ParseSweepConfig validates it: n_startup_trials >= 0, n_warmup_steps >= 0,
  // interval_steps >= 1, n_min_trials >= 1.
  explicit MedianPruner(const MedianSpec& spec) : spec_(spec) {}

  bool Prune(Study* study, size_t index) override;

 private:
  MedianSpec spec_;
};

// np.nanpercentile(values, percentile) with numpy 1.24's default "linear" method, bit for bit
// (NaNs dropped; none left: NaN). Exposed for tests.
double NanPercentile(std::vector<double> values, double percentile);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_
