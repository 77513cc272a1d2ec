// Grid layouts (the grid phase of hpo/samplers/random_then_grid_sampler.h).
//
// LocalGrid, the second phase of random_then_grid: take the `top_k` best COMPLETE trials of the
// random phase (ties: lower trial number first) and refine around each one on the full grid's
// lrs (FullGrid's `lr_points` values over the range): the grid lrs in a window of ratio
// `lr_span` centred on the trial's lr, [lr / sqrt(lr_span), lr * sqrt(lr_span)], and the grid
// lr nearest it in any case. A window that crosses a bound of the range is slid inside it:
// [max / lr_span, max] at the upper bound, [min, min * lr_span] at the lower; a range narrower
// than lr_span is covered whole. (For a uniform lr the window keeps its width when slid.) Pair
// the lrs with the trial's batch size and `batch_neighbors` neighbours on each side in the
// sorted batch values; every other parameter keeps the trial's value. With a categorical lr,
// the lr values are the `lr_points` listed values nearest the trial's in list order. Points
// are ordered by rank of their centre, then nearest their centre first: by how many batch
// sizes away from the centre's (0 first), then by the lr's distance from the centre's (log
// scale, but for a uniform lr), ties in ascending lr, then batch (the most promising points run
// first; the same points as ordering by lr). A point equal (SamePoint) to an earlier point or
// to any trial already in the study is dropped. The grid phase therefore runs
// points of the full grid only: random_then_grid is a cheaper way to the full grid's best.
//
// FullGrid, method `grid`: `lr_points` values log-spaced (or evenly, for uniform) over
// [min, max] (or every listed lr), times every batch size, times each other parameter's grid
// values: its listed values, or `lr_points` values over its range (log-spaced for
// log_uniform; for int, the distinct rounded integers of an even spacing).
//
// Their settings, search.grid (GridPhaseSpec), are this module's: GridSection parses them,
// GridSpecOf reads them.
//
// Thread-safety: pure functions; the section is an immutable static.
#ifndef TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// search.grid: the full grid's lr_points lrs over the range; random_then_grid's second phase
// refines on them. Defaults from bench/search_efficiency (docs/BENCHMARKS.md).
struct GridPhaseSpec {
  int64_t top_k = 2;
  int64_t lr_points = 10;
  double lr_span = 10.0;
  int64_t batch_neighbors = 1;
  // Whether random_then_grid climbs from the grid's best to its better neighbours afterwards
  // (hpo/samplers/random_then_grid_sampler.h).
  bool climb = true;
};

// The section "grid" of `search`: top_k >= 1, lr_points >= 1, lr_span >= 1,
// batch_neighbors >= 0, climb.
const SamplerSection& GridSection();
// The search.grid of `settings` (its defaults if not parsed), and the same to change.
const GridPhaseSpec& GridSpecOf(const SearchSettings& settings);
GridPhaseSpec& MutableGridSpec(SearchSettings* settings);

std::vector<Params> LocalGrid(const SearchSettings& config, const Study& study,
                              const std::vector<const Trial*>& random_trials);
std::vector<Params> FullGrid(const SearchSettings& config);
// The full grid's lrs, as FullGrid lists them.
std::vector<double> GridLrs(const SearchSettings& config);

// The best COMPLETE trial of `study` on the full grid's lattice (one of GridLrs and a batch
// size; ties: the first in `study`), with its indices there; trial null when there is none.
struct LatticeBest {
  const Trial* trial = nullptr;
  int64_t lr_index = -1;
  int64_t batch_index = -1;
};
LatticeBest BestOnLattice(const SearchSettings& config, const Study& study);

// One round of random_then_grid's climb (hpo/samplers/random_then_grid_sampler.h): the
// incumbent is the best COMPLETE trial of `study` on the full grid's lattice (one of GridLrs
// and a batch size; ties: the first in `study`); the result is its neighbours on the lattice,
// one grid lr and/or one batch size away (up to 8, diagonals included; ascending lr, then
// batch; every other parameter at the incumbent's value), less those equal (SamePoint) to one
// of `planned` or to a trial of `study`. Empty when there is no incumbent or all its
// neighbours were run or planned: the climb has reached a local optimum of the grid.
std::vector<Params> ClimbStep(const SearchSettings& config, const Study& study,
                              const std::vector<Params>& planned);

// A parameter's values in a full grid of `points` per range: its listed values (a list of
// strings: their indices), or `points` values over its range (log-spaced for log_uniform; for
// int, the distinct rounded integers of an even spacing of max(points, 2)), ascending.
std::vector<double> GridValues(const ParamSpec& p, int64_t points);

// The lr values of a local grid around `center`, ascending.
std::vector<double> LocalLrs(const SearchSettings& config, double center);

// True when the two points have the same parameters: equal values, but floats within relative
// 1e-9.
bool SamePoint(const Params& a, const Params& b);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_GRID_SAMPLER_H_
