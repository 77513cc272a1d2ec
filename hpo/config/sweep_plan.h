// The plan of a sweep, as `hpo sweep --dry_run` prints it: the search space, the scaling rule,
// the phases with their trial counts, the first kPlanRandomPoints random points with their
// lr_effective, the pruner in words. The sampler and the pruner describe themselves
// (SamplerKind::describe, PrunerSettings::Describe). Pure function of the validated config; its
// cost does not grow with the number of trials or grid points.
#ifndef TUNEFLEET_HPO_CONFIG_SWEEP_PLAN_H_
#define TUNEFLEET_HPO_CONFIG_SWEEP_PLAN_H_

#include <cstdint>
#include <string>

#include "hpo/config/sweep_config.h"
#include "hpo/samplers/grid_plan.h"

namespace tunefleet {
namespace hpo {

// The random points the plan lists; "... N more random points" stands for the rest.
inline constexpr int64_t kPlanRandomPoints = 20;

// Upper bound on the number of trials the search proposes: the sampler's own bound
// (SamplerKind::max_planned_trials). Cheap for any sizes (no loop over the points: counts that
// saturate at INT64_MAX); exact for grids small enough to list. The grids' arithmetic
// (FullGridBound, GridBatchCount): hpo/samplers/grid_plan.h.
int64_t MaxPlannedTrials(const SweepConfig& config);

std::string DescribePruner(const SweepConfig& config);
std::string DescribeSweepPlan(const SweepConfig& config);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_SWEEP_PLAN_H_
