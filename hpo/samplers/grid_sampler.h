// Grid layouts (DESIGN.md, "Search: random, then grid").
//
// LocalGrid, the second phase of random_then_grid: take the `top_k` best COMPLETE trials of the
// random phase (ties: lower trial number first); around each one's lr put `lr_points` values
// log-spaced over a window of ratio `lr_span` centred on it, [lr / sqrt(lr_span),
// lr * sqrt(lr_span)]. A window that crosses a bound of the lr range is slid inside it (so
// that clipping never makes two of its points equal): [max / lr_span, max] at the upper bound,
// [min, min * lr_span] at the lower; a range narrower than lr_span is covered whole. Pair the
// lrs with the centre's batch size and `batch_neighbors` neighbours on each side in the sorted
// batch values; every other parameter keeps the centre's value. With a categorical lr, the lr
// values are the `lr_points` listed values nearest the centre in list order. Points are
// ordered by rank of their centre, then lr, then batch; a point equal (SamePoint) to an
// earlier point or to any trial already in the study is dropped.
//
// FullGrid, method `grid`: `lr_points` values log-spaced (or evenly, for uniform) over
// [min, max] (or every listed lr), times every batch size, times each other parameter's grid
// values: its listed values, or `lr_points` values over its range (log-spaced for
// log_uniform; for int, the distinct rounded integers of an even spacing).
#ifndef TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_

#include <vector>

#include "hpo/sampler.h"
#include "hpo/sweep_config.h"

namespace tunefleet {
namespace hpo {

std::vector<Params> LocalGrid(const SweepConfig& config, const Study& study,
                              const std::vector<const Trial*>& random_trials);
std::vector<Params> FullGrid(const SweepConfig& config);

// The lr values of a local grid around `center` (a float lr range), ascending.
std::vector<double> LocalLrs(const SweepConfig& config, double center);

// True when the two points have the same parameters: equal values, but floats within relative
// 1e-9.
bool SamePoint(const Params& a, const Params& b);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_
