// How many trials the grid layouts (hpo/samplers/grid_sampler.h) hold, by arithmetic: cheap for
// any sizes (no loop over the points; counts saturate at INT64_MAX), exact for grids small
// enough to list. The samplers' kinds bound their plans with these (SamplerKind::
// max_planned_trials), which `hpo sweep` checks before it starts.
//
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_SAMPLERS_GRID_PLAN_H_
#define TUNEFLEET_HPO_SAMPLERS_GRID_PLAN_H_

#include <cstdint>

#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// The full grid's size before de-duplication.
int64_t FullGridBound(const SearchSettings& settings);
// How many batch sizes a grid around one batch size covers.
int64_t GridBatchCount(const SearchSettings& settings);
// The full grid's trials: listed when FullGridBound is small enough, else that bound.
int64_t FullGridTrials(const SearchSettings& settings);
// Upper bound on the trials of random_then_grid's local grid: top_k centres times the most lrs
// a local grid can have times GridBatchCount.
int64_t LocalGridBound(const SearchSettings& settings);
// a + b, saturating at INT64_MAX (both >= 0).
int64_t SaturatingAdd(int64_t a, int64_t b);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_GRID_PLAN_H_
