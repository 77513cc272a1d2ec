// PercentilePruner: Optuna 3.1's PercentilePruner, decision for decision, for
// `early_terminate: {type: percentile, percentile: P, ...}`. When the RUNNING trial reports
// step s (its last, i.e. largest, step), it is pruned when all of these hold:
//   - at least max(1, n_startup_trials) trials are COMPLETE (no other state counts);
//   - s >= n_warmup_steps, and s is the trial's first report in its pruning interval (the
//     intervals are [w + k * interval_steps, w + (k + 1) * interval_steps));
//   - the trial's best intermediate value over all its steps (NaNs skipped) is NaN, i.e. every
//     value it reported is NaN: pruned at once; otherwise
//   - at least n_min_trials COMPLETE trials reported step s (NaN reports count here), and the
//     trial's best value is strictly worse than np.nanpercentile of their values at s (linear
//     interpolation, NaNs skipped; all NaN: never pruned) at P when minimizing, at 100 - P
//     when maximizing: the trials outside the best P percent are pruned.
// The study's direction (Study::maximize) says what "best" and "worse" mean. MedianPruner
// (hpo/pruners/median_pruner.h) is this pruner at P = 50.
//
// PercentilePrunerKind is its registry entry (hpo/pruners/pruner_kind.h): keys percentile
// (required, in [0, 100], as Optuna requires), n_startup_trials (default 5, >= 0),
// n_warmup_steps (0, >= 0), interval_steps (1, >= 1) and n_min_trials (1, >= 1).
//
// Thread-safety: a pruner is used from the sweep driver's thread only; the kind is immutable.
#ifndef TUNEFLEET_HPO_PRUNERS_PERCENTILE_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_PERCENTILE_PRUNER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"
#include "hpo/pruners/pruner.h"
#include "hpo/pruners/pruner_kind.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// Optuna PercentilePruner(percentile, n_startup_trials, n_warmup_steps, interval_steps,
// n_min_trials).
struct PercentileSpec {
  double percentile = 50.0;
  int64_t n_startup_trials = 5;
  int64_t n_warmup_steps = 0;
  int64_t interval_steps = 1;
  int64_t n_min_trials = 1;
};

class PercentilePruner : public Pruner {
 public:
  // `spec` as its kind validates it: percentile in [0, 100], n_startup_trials >= 0,
  // n_warmup_steps >= 0, interval_steps >= 1, n_min_trials >= 1.
  explicit PercentilePruner(const PercentileSpec& spec) : spec_(spec) {}

  bool Prune(Study* study, size_t index) override;

 private:
  PercentileSpec spec_;
};

const PrunerKind& PercentilePrunerKind();

// For the percentile family's kinds (median too): reads and checks the optional
// n_startup_trials, n_warmup_steps, interval_steps and n_min_trials into *spec.
absl::Status ParsePercentileSchedule(const ConfigMap& m, PercentileSpec* spec);
// The same four as journal JSON fields, in that order.
std::vector<std::pair<std::string, std::string>> PercentileScheduleJson(const PercentileSpec& s);

// np.nanpercentile(values, percentile) with numpy 1.24's default "linear" method, bit for bit
// (NaNs dropped; none left: NaN). Exposed for tests and the benchmark.
double NanPercentile(std::vector<double> values, double percentile);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_PERCENTILE_PRUNER_H_
