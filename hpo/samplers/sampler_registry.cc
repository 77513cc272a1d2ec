#include "hpo/samplers/sampler_registry.h"

#include "common/logging.h"
#include "hpo/samplers/all_samplers.h"

namespace tunefleet {
namespace hpo {

const SamplerKind* FindSamplerKind(const std::string& method) {
  for (const SamplerKind* kind : AllSamplerKinds()) {
    if (kind->method == method) return kind;
  }
  return nullptr;
}

std::vector<std::string> SamplerMethods() {
  std::vector<std::string> methods;
  for (const SamplerKind* kind : AllSamplerKinds()) methods.push_back(kind->method);
  return methods;
}

const SamplerKind& SamplerKindOf(const SearchSettings& settings) {
  const SamplerKind* kind = FindSamplerKind(settings.method);
  // ParseSweepConfig accepts registered methods only.
  TF_CHECK(kind != nullptr) << "no sampler for search.method '" << settings.method << "'";
  return *kind;
}

std::unique_ptr<Sampler> MakeSampler(const SearchSettings& settings) {
  return SamplerKindOf(settings).make(settings);
}

}  // namespace hpo
}  // namespace tunefleet
