#include "hpo/samplers/all_samplers.h"

#include "hpo/samplers/random_then_grid_sampler.h"
#include "hpo/samplers/random_then_local_sampler.h"
#include "hpo/samplers/tpe_sampler.h"

namespace tunefleet {
namespace hpo {

const std::vector<const SamplerKind*>& AllSamplerKinds() {
  static const auto* const kKinds = new std::vector<const SamplerKind*>{
      &RandomSearchKind(),    &GridSearchKind(), &RandomThenGridKind(),
      &RandomThenLocalKind(), &TpeKind(),
  };
  return *kKinds;
}

}  // namespace hpo
}  // namespace tunefleet
