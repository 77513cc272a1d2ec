// Grid layouts (DESIGN.md, "Search: random, then grid").
//
// LocalGrid, the second phase of random_then_grid: take the `top_k` best COMPLETE trials of the
// random phase (ties: lower trial number first); around each one's lr put `lr_points` values
// log-spaced over [lr / sqrt(lr_span), lr * sqrt(lr_span)], each clipped to [min, max], and
// pair them with its batch size and `batch_neighbors` neighbours on each side in the sorted
// batch values. With a categorical lr, the lr values are the `lr_points` listed values nearest
// the centre in list order. Points are ordered by rank of their centre, then lr, then batch;
// a point equal (relative 1e-9) to an earlier point or to any trial already in the study is
// dropped.
//
// FullGrid, method `grid`: `lr_points` values log-spaced (or evenly, for uniform) over
// [min, max] (or every listed lr), times every batch size.
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

// True when the two points have the same batch and lr within relative 1e-9.
bool SamePoint(const Params& a, const Params& b);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_
