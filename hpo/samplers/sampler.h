// The sampler interface, in the shape of Optuna's BaseSampler so further samplers plug in the
// same way: for each new trial the driver calls BeforeTrial, InferRelativeSearchSpace,
// SampleRelative for that space, SampleIndependent for every parameter the relative sample
// left out, and AfterTrial once the trial has finished.
//
// One addition to Optuna's shape: a sweep here is finite and phased (random, then a grid that
// depends on the random results), so a sampler also says whether it can propose a trial now,
// which point of its plan a trial takes (Trial::point, set in BeforeTrial), when a point whose
// trials failed is settled (the driver retries it until then), and how many trials it
// proposes in all once that is known.
//
// Thread-safety: a sampler is used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

using Params = std::map<std::string, double>;

enum class Availability {
  kReady,      // a new trial can be sampled now
  kWait,       // not until running trials finish (e.g. the grid needs the random results)
  kExhausted,  // the sampler has no more trials to propose
};

class Sampler {
 public:
  virtual ~Sampler() = default;

  virtual Availability NextAvailability(const Study& study) = 0;

  virtual SearchSpace InferRelativeSearchSpace(const Study& study, const Trial& trial) = 0;
  virtual Params SampleRelative(const Study& study, const Trial& trial,
                                const SearchSpace& space) = 0;
  virtual double SampleIndependent(const Study& study, const Trial& trial, const std::string& name,
                                   const Distribution& distribution) = 0;
  virtual void BeforeTrial(const Study& study, Trial* trial) {}
  virtual void AfterTrial(const Study& study, const Trial& trial) {}

  // Whether point `point` needs no more trials: the driver queues a failed trial's point for
  // a retry until it is. The default retries nothing.
  virtual bool Settled(const Study& study, int64_t point) const { return true; }
  // The trials this sampler proposes in all, once known (e.g. once its grid is laid out);
  // nullopt before, or for an unbounded sampler.
  virtual std::optional<int64_t> PlannedTrials() const { return std::nullopt; }
};

// Whether `trial` counts as a failed attempt of its point: FAIL for a reason other than
// "interrupted..." (the sweep, not the trial, stopped) or its node's loss ("agent NAME lost
// (...)": the trial did nothing wrong). Settled() and the retry line's attempt number
// (SweepEngine::Attempt) count with it.
bool CountsAsFailedAttempt(const Trial& trial);
// Whether `trial` failed because the head lost the agent it ran on. Such attempts do not use
// up max_failures_per_trial, but a point is given up after kMaxNodeLosses of them, so that a
// node that keeps dying cannot retry a point forever.
bool LostWithItsNode(const Trial& trial);
inline constexpr int64_t kMaxNodeLosses = 3;
// Sampler::Settled for a sampler that retries a point's failed trials: one of its trials is
// COMPLETE or PRUNED, or more than `max_failures` counted as failed attempts, or more than
// kMaxNodeLosses were lost with their node.
bool PointSettled(const Study& study, int64_t point, int64_t max_failures);

// Optuna's order: relative sample first, then independent sampling for the rest of `space`.
Params SampleTrial(Sampler& sampler, const Study& study, Trial* trial, const SearchSpace& space);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_
