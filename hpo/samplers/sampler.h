// The sampler interface, in the shape of Optuna's BaseSampler so further samplers plug in the
// same way: for each new trial the driver calls BeforeTrial, InferRelativeSearchSpace,
// SampleRelative for that space, SampleIndependent for every parameter the relative sample
// left out, and AfterTrial once the trial has finished.
//
// One addition to Optuna's shape: a sweep here is finite and phased (random, then a grid that
// depends on the random results), so a sampler also says whether it can propose a trial now.
//
// Thread-safety: a sampler is used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_
#define TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_

#include <map>
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
  virtual double SampleIndependent(const Study& study, const Trial& trial,
                                   const std::string& name, const Distribution& distribution) = 0;
  virtual void BeforeTrial(const Study& study, Trial* trial) {}
  virtual void AfterTrial(const Study& study, const Trial& trial) {}
};

// Optuna's order: relative sample first, then independent sampling for the rest of `space`.
Params SampleTrial(Sampler& sampler, const Study& study, Trial* trial, const SearchSpace& space);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SAMPLER_H_
