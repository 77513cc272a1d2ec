// Random layout: lr log-uniform (or uniform) in [min, max], batch_size uniformly from its
// values, and so each other parameter: floats log-uniform or uniform, ints uniform over
// min..max, categoricals uniform over their values. Each trial's point depends only on (seed, trial
// number), so a resumed sweep proposes exactly the points it would have proposed the first time.
#ifndef TUNEFLEET_HPO_SAMPLERS_RANDOM_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_RANDOM_SAMPLER_H_

#include <cstdint>

#include "hpo/samplers/sampler.h"

namespace tunefleet {
namespace hpo {

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
