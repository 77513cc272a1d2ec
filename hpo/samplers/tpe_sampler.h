// search.method `tpe`: Optuna 3.1's TPESampler (optuna/samplers/_tpe/sampler.py), single
// objective, without constant_liar, group or constraints, over the sweep's search space, with
// the Parzen estimator of hpo/samplers/parzen_estimator.h. Settings: search.tpe (TpeSpec, this
// module's: TpeSection parses them, TpeSpecOf reads them); the seed is search.random.seed.
//
// For a new point: the study's COMPLETE and PRUNED trials are its observations (n of them;
// running and failed trials are ignored, a COMPLETE trial without a value too). While
// n < n_startup_trials the point is random, RandomSampler's point (hpo/samplers/random_sampler.h)
// with the same seed. Then the observations are ranked, best first, by (step key, value): a
// COMPLETE trial's key is -inf, a PRUNED one's minus its last reported step (longer-trained
// first), with its last intermediate value (+inf when NaN), or key 1 when it reported nothing;
// values negated when maximizing; ties keep trial order. The best min(ceil(gamma * n), 25) are
// "below", the rest "above", each in trial order. A Parzen estimator is fitted to each; 24
// (n_ei_candidates) candidates are drawn from below's, and the one with the largest
// log l(x) - log g(x) is proposed. Independent (the default): one parameter at a time;
// multivariate: jointly over the parameters every COMPLETE or PRUNED trial has (Optuna's
// IntersectionSearchSpace, less the single-valued), the rest independently.
//
// Points: each new trial takes the next point (0, 1, ...); a failed trial is retried at the
// same point (same params) until the point is settled, as random_then_grid's are; the sampler
// proposes search.tpe.trials points. Each point's draws come from a generator seeded by
// (search.random.seed, point, parameter), so a resumed sweep (the same study) proposes the
// same point; with no retries a trial's point is its number.
//
// Thread-safety: driver thread only.
#ifndef TUNEFLEET_HPO_SAMPLERS_TPE_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_TPE_SAMPLER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hpo/samplers/parzen_estimator.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// search.tpe: Optuna 3.1's TPESampler settings, its defaults; `gamma` is default_gamma's
// fraction: min(ceil(gamma * n), 25) trials are "below".
struct TpeSpec {
  int64_t trials = 40;  // the points it proposes in all (a sweep must end)
  int64_t n_startup_trials = 10;
  int64_t n_ei_candidates = 24;
  double gamma = 0.1;
  double prior_weight = 1.0;
  bool consider_prior = true;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
};

// The registry's entry (hpo/samplers/all_samplers.cc) for search.method `tpe`.
const SamplerKind& TpeKind();
// The section "tpe" of `search` (TpeSpec's keys; refuses bad values naming the dotted key).
const SamplerSection& TpeSection();
// The search.tpe of `settings` (its defaults if not parsed), and the same to change.
const TpeSpec& TpeSpecOf(const SearchSettings& settings);
TpeSpec& MutableTpeSpec(SearchSettings* settings);

// Optuna's _get_observation_pairs: per COMPLETE or PRUNED trial, in trial order, its score
// (step key, signed value; see above) and its value of each parameter of `space` (internal
// form; NaN where the trial lacks it).
struct ObservationPairs {
  std::vector<std::pair<double, double>> scores;
  Observations values;
};
ObservationPairs GetObservationPairs(const Study& study, const SearchSpace& space);
// default_gamma with `gamma` for its 0.1: min(ceil(gamma * n), 25).
int64_t TpeBelowCount(double gamma, int64_t n);
// _split_observation_pairs: the indices of the `n_below` best scores and of the rest, each in
// ascending (trial) order.
void SplitObservationPairs(const std::vector<std::pair<double, double>>& scores, int64_t n_below,
                           std::vector<size_t>* below, std::vector<size_t>* above);

class TpeSampler : public Sampler {
 public:
  explicit TpeSampler(const SearchSettings& settings);

  Availability NextAvailability(const Study& study) override;
  SearchSpace InferRelativeSearchSpace(const Study& study, const Trial& trial) override;
  Params SampleRelative(const Study& study, const Trial& trial, const SearchSpace& space) override;
  double SampleIndependent(const Study& study, const Trial& trial, const std::string& name,
                           const Distribution& distribution) override;
  // The trial's point and phase ("random" while n < n_startup_trials, else "tpe").
  void BeforeTrial(const Study& study, Trial* trial) override;
  bool Settled(const Study& study, int64_t point) const override;
  std::optional<int64_t> PlannedTrials() const override { return spec_.trials; }

 private:
  // The TPE proposal over `space` (external form), or nullopt while n < n_startup_trials.
  std::optional<Params> Propose(const Study& study, int64_t point, const SearchSpace& space,
                                const std::string& stream) const;
  std::mt19937_64 Generator(int64_t point, const std::string& stream) const;

  TpeSpec spec_;
  uint64_t seed_;
  int64_t max_failures_;
  SearchSpace space_;
  RandomSampler random_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_TPE_SAMPLER_H_
