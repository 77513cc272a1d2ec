// Random layout: lr log-uniform (or uniform) in [min, max], batch_size uniformly from its
// values, and so each other parameter: floats log-uniform or uniform, ints uniform over
// min..max, categoricals uniform over their values. Each trial's point depends only on (seed, trial
// number), so a resumed sweep proposes exactly the points it would have proposed the first time.
//
// Its settings, search.random (RandomPhaseSpec: the random phase's trials and the seed every
// sampler draws with), are this module's: RandomSection parses them, RandomSpecOf reads them.
//
// Thread-safety: a sampler is used from one thread; the section is an immutable static.
#ifndef TUNEFLEET_HPO_SAMPLERS_RANDOM_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_RANDOM_SAMPLER_H_

#include <cstdint>

#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// search.random.
struct RandomPhaseSpec {
  int64_t trials = 8;
  int64_t seed = 0;
};

// The section "random" of `search`: trials >= 1, seed >= 0.
const SamplerSection& RandomSection();
// The search.random of `settings` (its defaults if not parsed), and the same to change.
const RandomPhaseSpec& RandomSpecOf(const SearchSettings& settings);
RandomPhaseSpec& MutableRandomSpec(SearchSettings* settings);

class RandomSampler : public Sampler {
 public:
  // `max_trials` < 0: unlimited.
  RandomSampler(uint64_t seed, int64_t max_trials) : seed_(seed), max_trials_(max_trials) {}

  Availability NextAvailability(const Study& study) override;
  SearchSpace InferRelativeSearchSpace(const Study&, const Trial&) override { return {}; }
  Params SampleRelative(const Study&, const Trial&, const SearchSpace&) override { return {}; }
  double SampleIndependent(const Study& study, const Trial& trial, const std::string& name,
                           const Distribution& distribution) override;

  // The point for trial `number`, independent of any study state.
  Params PointFor(int64_t number, const SearchSpace& space) const;

 private:
  double Draw(int64_t number, const std::string& name, const Distribution& distribution) const;
  uint64_t seed_;
  int64_t max_trials_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_RANDOM_SAMPLER_H_
