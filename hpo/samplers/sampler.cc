#include "hpo/samplers/sampler.h"

namespace tunefleet {
namespace hpo {

Params SampleTrial(Sampler& sampler, const Study& study, Trial* trial, const SearchSpace& space) {
  sampler.BeforeTrial(study, trial);
  const SearchSpace relative_space = sampler.InferRelativeSearchSpace(study, *trial);
  Params params = sampler.SampleRelative(study, *trial, relative_space);
  for (const auto& [name, distribution] : space) {
    if (params.count(name) == 0) {
      params[name] = sampler.SampleIndependent(study, *trial, name, distribution);
    }
  }
  trial->params = params;
  return params;
}

}  // namespace hpo
}  // namespace tunefleet
