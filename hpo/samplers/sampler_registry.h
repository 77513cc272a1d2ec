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
#include "hpo/search_space.h"

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
// The sections of `search` the kinds read ("random", "grid", "tpe"), each once, in registry
// order: the keys of `search` besides `method`.
std::vector<std::string> SamplerSections();
// Parses every kind's sections of `search` into settings->sections (SamplerSection::parse),
// whatever the method, then the configured kind's checks (SamplerKind::validate);
// settings->method must be registered.
absl::Status ParseSamplerSections(const ConfigMap& search, SearchSettings* settings);
// The random points that lead the plan of settings.method (its first random_points trials),
// at most `at_most` of them, in trial order: RandomSampler's points with search.random.seed.
std::vector<Params> LeadingRandomPoints(const SearchSettings& settings, const SearchSpace& space,
                                        int64_t at_most);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SAMPLER_REGISTRY_H_
