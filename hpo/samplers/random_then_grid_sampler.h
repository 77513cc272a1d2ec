// The sweep's sampler for all three methods (`random`, `grid`, `random_then_grid`): a plan of
// points, proposed in order, each at most once. Point i < random.trials is RandomSampler's
// point i; the grid points follow (hpo/samplers/grid_sampler.h). The local grid needs the random
// phase's results, so once every random point is taken the sampler answers kWait until every
// random point is settled: it has a COMPLETE or PRUNED trial, or more than
// max_failures_per_trial failed ones (the driver retries failed points itself; a trial
// failed with a reason starting "interrupted" — the sweep, not the trial, stopped — does not
// count, nor one lost with its node, of which more than kMaxNodeLosses settle the point:
// CountsAsFailedAttempt and LostWithItsNode, hpo/samplers/sampler.h).
//
// The climb (random_then_grid, unless search.grid.climb is false): the local grid may miss the
// grid's best when it lies just beyond the neighbourhoods of the top_k random trials (one
// batch size or one grid lr past the edge of the best one's: on bench/search_tables' nli
// table, 11 of 100 seeds never came within 0.005 of the best). So once every planned point is
// settled, the sampler plans a round of ClimbStep (hpo/samplers/grid_sampler.h): the
// unexplored lattice neighbours of the best COMPLETE grid point so far; and again after those,
// until a round finds none (the best is a local optimum of the explored grid) or the climb has
// used what the local grid left of LocalGridBound (so max_planned_trials still bounds the
// plan). PlannedTrials is unknown until the climb ends.
// A round starts when every planned point is settled, so every seat is free then. A round of
// fewer points than max_concurrent_trials fills the other seats ahead (FillSeats): for each
// of its points expected to win, the round that would follow it if it did. When it does, the next
// round finds those already run and the climb ends a round sooner; otherwise they were run on
// seats that would have stood idle, and the climb goes on from the best point, as before
// (configs/lr.yaml's climb: two rounds of 2 points became one of 4, the same points). At
// max_concurrent_trials 1 nothing changes. A sweep resumed with another max_concurrent_trials
// still plans at the width its journal recorded (SweepEngine::Resume), so that it replays the
// rounds the interrupted one planned.
//
// Everything is derived from the study, so a resumed sweep proposes exactly the points the
// interrupted one had left: the local grid is computed from the random phase's trials alone
// (point < random.trials), so grid trials already in a resumed study do not change it, and each
// climb round from the trials of the points planned before it alone.
// Thread-safety: driver thread only.
#ifndef TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_GRID_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_GRID_SAMPLER_H_

#include <optional>
#include <set>
#include <vector>

#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// The registry's entries (hpo/samplers/all_samplers.cc) for the three methods this sampler
// runs: `random` (random.trials random points), `grid` (the full grid) and `random_then_grid`
// (random.trials random points, then the local grid around the top_k best).
const SamplerKind& RandomSearchKind();
const SamplerKind& GridSearchKind();
const SamplerKind& RandomThenGridKind();
// The check of random_then_grid's settings (and random_then_local's): grid.top_k is at most
// random.trials.
absl::Status TopKWithinRandom(const ConfigMap& search, const SearchSettings& settings);
// The plan's words for FillSeats (", a round of fewer than N points filled ..."); empty at
// max_concurrent_trials 1.
std::string FilledRoundsNote(const SearchSettings& settings);

class RandomThenGridSampler : public Sampler {
 public:
  explicit RandomThenGridSampler(const SearchSettings& settings);

  Availability NextAvailability(const Study& study) override;
  SearchSpace InferRelativeSearchSpace(const Study& study, const Trial& trial) override;
  Params SampleRelative(const Study& study, const Trial& trial, const SearchSpace& space) override;
  double SampleIndependent(const Study& study, const Trial& trial, const std::string& name,
                           const Distribution& distribution) override;
  // Chooses the trial's point and phase.
  void BeforeTrial(const Study& study, Trial* trial) override;

  // Whether a point is settled (see above).
  bool Settled(const Study& study, int64_t point) const override;
  // random_points() plus the grid's size, once the grid is known.
  std::optional<int64_t> PlannedTrials() const override;
  // The grid points, once known (empty optional before the random phase settles).
  const std::optional<std::vector<Params>>& grid() const { return grid_; }
  int64_t random_points() const { return random_points_; }

 protected:
  // random_then_local's sampler (hpo/samplers/random_then_local_sampler.h) changes the climb:
  // what one round proposes from the trials of the planned points (`settled`), none equal to
  // `planned` (empty: the climb ends); the most points the local grid and the climb may plan
  // together; and whether it climbs at all.
  virtual std::vector<Params> ClimbRound(const Study& settled, const std::vector<Params>& planned);
  // ClimbRound for a study that never happened (FillSeats' hypothetical winner): the same
  // points, leaving the sampler as it was.
  virtual std::vector<Params> LookAheadRound(const Study& settled,
                                             const std::vector<Params>& planned);
  // The point the climb's rounds move from: the best COMPLETE trial on the grid's lattice.
  virtual const Trial* Incumbent(const Study& settled) const;
  virtual int64_t LocalBound() const;
  virtual bool Climbs() const { return GridSpecOf(config_).climb; }
  const SearchSettings& settings() const { return config_; }

 private:
  int64_t NextUntakenPoint(const Study& study) const;
  // Whether every point below `end` is settled (one pass over the study).
  bool AllSettled(const Study& study, int64_t end) const;
  // The trials of the points below `end`.
  static Study TrialsBefore(const Study& study, int64_t end);
  Params PointParams(int64_t point) const;
  // Fills a climb round of fewer points than max_concurrent_trials with the rounds that would
  // follow it (LookAheadRound): for each of its points expected to beat the incumbent (the
  // incumbent's value less that of the settled trial at the point's mirror image about it is
  // positive), the most promising first, the round from it if it won (a study where it is the
  // best trial), less what is planned. The round's own points come first, so the climb budget
  // cuts the look-ahead before them.
  void FillSeats(const Study& settled, std::vector<Params> planned, std::vector<Params>* round);

  SearchSettings config_;
  SearchSpace space_;
  RandomSampler random_;
  int64_t random_points_;
  std::optional<std::vector<Params>> grid_;
  // The climb: whether a round may follow the last planned point, and how many points the
  // climb may still add (what the local grid left of LocalGridBound).
  bool climbing_ = false;
  int64_t climb_budget_ = 0;
  // NextUntakenPoint's memory of the study it last saw, so that a sweep's trials cost O(1) each,
  // not a pass over every trial: the points of its first `seen` trials (a trial's point never
  // changes; a study only grows), and the lowest point none of them took. Another study (its
  // address, or the last seen trial's number and point, differ) starts over.
  struct Taken {
    const Study* study = nullptr;
    size_t seen = 0;
    int64_t last_number = -1;
    int64_t last_point = -1;
    std::set<int64_t> points;
    int64_t next = 0;
  };
  mutable Taken taken_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_RANDOM_THEN_GRID_SAMPLER_H_
