// MedianPruner: Optuna 3.1's MedianPruner, which is its PercentilePruner at the 50th
// percentile: the algorithm (and np.nanpercentile, bit for bit) is
// hpo/pruners/percentile_pruner.h's; this module is that pruner's configuration at 50, with its
// own type name, dry-run words and journal attr.
//
// MedianPrunerKind is its registry entry (hpo/pruners/pruner_kind.h): `early_terminate:
// {type: median}` with the optional n_startup_trials (default 5, >= 0), n_warmup_steps (0,
// >= 0), interval_steps (1, >= 1) and n_min_trials (1, >= 1).
//
// Thread-safety: a pruner is used from the sweep driver's thread only; the kind is immutable.
#ifndef TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_

#include <cstdint>

#include "hpo/pruners/percentile_pruner.h"
#include "hpo/pruners/pruner_kind.h"

namespace tunefleet {
namespace hpo {

// Optuna MedianPruner(n_startup_trials, n_warmup_steps, interval_steps, n_min_trials).
struct MedianSpec {
  int64_t n_startup_trials = 5;
  int64_t n_warmup_steps = 0;
  int64_t interval_steps = 1;
  int64_t n_min_trials = 1;
};

class MedianPruner : public PercentilePruner {
 public:
  // `spec` as its kind validates it: n_startup_trials >= 0, n_warmup_steps >= 0,
  // interval_steps >= 1, n_min_trials >= 1.
  explicit MedianPruner(const MedianSpec& spec);
};

const PrunerKind& MedianPrunerKind();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_MEDIAN_PRUNER_H_
