// The plan of a sweep, as `hpo sweep --dry_run` prints it: the search space, the scaling rule,
// the phases with their trial counts, the first random points with their lr_effective, the
// pruner in words. Pure function of the validated config.
#ifndef TUNEFLEET_HPO_SWEEP_PLAN_H_
#define TUNEFLEET_HPO_SWEEP_PLAN_H_

#include <cstdint>
#include <string>

#include "hpo/sweep_config.h"

namespace tunefleet {
namespace hpo {

// Upper bound on the number of trials the search proposes (before grid de-duplication).
int64_t MaxPlannedTrials(const SweepConfig& config);
// How many batch sizes a grid around one batch size covers.
int64_t GridBatchCount(const SweepConfig& config);

std::string DescribePruner(const SweepConfig& config);
std::string DescribeSweepPlan(const SweepConfig& config);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SWEEP_PLAN_H_
