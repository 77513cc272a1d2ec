// The sampler registry's look-ups over AllSamplerKinds (hpo/samplers/all_samplers.h): the sweep
// config validates search.method here, and the sweep engine, the dry run and the pre-flight
// checks find the configured sampler's kind here, without knowing any method name themselves.
//
// Thread-safety: pure functions over immutable kinds.
#ifndef TUNEFLEET_HPO_SAMPLERS_SAMPLER_REGISTRY_H_
#define TUNEFLEET_HPO_SAMPLERS_SAMPLER_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// The kind whose search.method is `method`; null if none.
const SamplerKind* FindSamplerKind(const std::string& method);
// The registered methods, in registry order.
std::vector<std::string> SamplerMethods();
// The kind of `settings.method`, which must be registered (the sweep config checks it).
const SamplerKind& SamplerKindOf(const SearchSettings& settings);
// A new sampler of settings.method.
std::unique_ptr<Sampler> MakeSampler(const SearchSettings& settings);
// The `search` sections the kinds parse themselves ("tpe"), in registry order.
std::vector<std::string> SamplerSections();
// Parses each kind's own section of `search` into `settings` (SamplerKind::parse_section).
absl::Status ParseSamplerSections(const ConfigMap& search, SearchSettings* settings);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SAMPLER_REGISTRY_H_
