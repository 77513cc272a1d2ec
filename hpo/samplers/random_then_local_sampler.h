// Method `random_then_local`: random_then_grid (hpo/samplers/random_then_grid_sampler.h) whose
// climb refines every searched parameter, not only lr and batch_size. random.trials random
// points, then the local grid around the top_k best (grid.top_k, lr_points, lr_span,
// batch_neighbors: LocalGrid, hpo/samplers/grid_sampler.h), then the local climb: once every
// planned point is settled, a round of LocalClimbStep from the best COMPLETE point on the
// lr x batch lattice, the full grid's lrs split to the finest level below (BestOnLattice on
// FinerLrs): its lattice neighbours (ClimbStep: one grid lr and/or one batch size away) and,
// for each other parameter, its neighbours on that parameter's implied grid, the others at the
// incumbent's values:
//   values lists     the values before and after the incumbent's in the list;
//   uniform, log_uniform, int ranges
//                    the nearest values below and above the incumbent's on the range split
//                    into `steps` equal steps (log-spaced for log_uniform; int: the rounded
//                    integers), the incumbent's own value left out.
// `steps` starts at kFirstLocalSteps (2: min, middle, max). When such a round has nothing left
// to run (every neighbour run or planned), the climb tries, in turn, until one proposes
// something:
//   finer lr    a line search in lr by halving steps: the incumbent with lr 2^-L of a grid
//               step below and above its own, at the first level L with one of the two unrun,
//               L from the larger of kFinerLrLevels (3: an eighth) and one past the level of
//               the incumbent's lr (the least L whose lattice holds it: 0 for a grid lr), to
//               kMaxFinerLrLevels (6). So around a grid lr an eighth either side, then (both
//               worse) a sixteenth, ...; around an eighth that won, a sixteenth either side:
//               never step by step along a finer lattice. The grid's lrs are a factor 2.15
//               apart in configs/lr.yaml and the optimum is often between two of them (sts5's
//               table: at 2.51e-3, between 2.15e-3 and 4.64e-3; an eighth reaches 2.37e-3,
//               0.7134, a sixteenth 2.49e-3, 0.7143, its best being 0.7145);
//   pairs       two coordinates at once: another parameter's neighbour together with one of
//               lr's (on the full grid), batch's or a further parameter's (a valley of one
//               coordinate that only a move in two crosses);
//   finer steps `steps` doubles, up to grid.lr_points - 1 (the full grid's resolution).
// The climb ends when the finest steps find nothing, or when the plan reaches LocalSearchBound,
// which is what max_planned_trials adds to random.trials. Without other parameters it runs
// exactly random_then_grid's points (with the climb, whatever grid.climb says).
//
// Its trials after the random ones are in phase "grid" (hpo/trial.h), as random_then_grid's.
// Like random_then_grid, everything is derived from the study: each round (and its `steps`)
// comes from the trials of the points planned before it alone, so a resumed sweep replays the
// rounds and proposes exactly the points the interrupted one had left.
// Thread-safety: driver thread only.
#ifndef TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_LOCAL_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_LOCAL_SAMPLER_H_

#include <cstdint>
#include <vector>

#include "hpo/samplers/random_then_grid_sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

inline constexpr int64_t kFirstLocalSteps = 2;
inline constexpr int64_t kFinerLrLevels = 3;
inline constexpr int64_t kMaxFinerLrLevels = 6;

// The registry's entry for `random_then_local` (hpo/samplers/all_samplers.cc).
const SamplerKind& RandomThenLocalKind();

// The most points the local grid and the climb plan together: random_then_grid's bound
// (LocalGridBound) times one plus the number of other parameters.
int64_t LocalSearchBound(const SearchSettings& settings);

// The neighbours of `value` on the implied grid of `param` at `steps` steps (see above),
// ascending for ranges, in list order for lists; at most two.
std::vector<double> ImpliedNeighbours(const ParamSpec& param, double value, int64_t steps);

// `settings` whose grid lrs are the full grid's with each step split in 2^kMaxFinerLrLevels
// (the same range; every grid lr and every finer lr is one of them): the lattice the incumbent
// is chosen on.
SearchSettings FinerLrs(const SearchSettings& settings);

// One round of the local climb at `steps` (see above) from the best COMPLETE trial of `study`
// on FinerLrs' lattice: kCoordinates, its neighbours in lr x batch (one grid lr and/or one
// batch size away, ascending lr then batch, as ClimbStep) then in each other parameter in file
// order; kFinerLr, the finer lrs (those of the first level with one unrun); kPairs, the pair
// moves (for each other parameter in file order, with lr, batch and the parameters before it).
// Less those equal to one of `planned` or to a trial of `study`. Empty without an incumbent.
enum class LocalRound { kCoordinates, kFinerLr, kPairs };
std::vector<Params> LocalClimbStep(const SearchSettings& settings, const Study& study,
                                   const std::vector<Params>& planned, int64_t steps,
                                   LocalRound round);

class RandomThenLocalSampler : public RandomThenGridSampler {
 public:
  explicit RandomThenLocalSampler(const SearchSettings& settings)
      : RandomThenGridSampler(settings) {}

  // The resolution the climb has reached: the other parameters' ranges in this many steps.
  int64_t steps() const { return steps_; }

 protected:
  std::vector<Params> ClimbRound(const Study& settled, const std::vector<Params>& planned) override;
  // ClimbRound, with `steps` put back afterwards (a look-ahead may not refine the real climb).
  std::vector<Params> LookAheadRound(const Study& settled,
                                     const std::vector<Params>& planned) override;
  const Trial* Incumbent(const Study& settled) const override;
  int64_t LocalBound() const override { return LocalSearchBound(settings()); }
  bool Climbs() const override { return true; }

 private:
  int64_t steps_ = kFirstLocalSteps;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_LOCAL_SAMPLER_H_
