// What a sampler works from: the searched parameters, the study's direction, search.method and
// the settings each sampler module parsed from its own section of `search`, held opaquely
// (hpo/config/sweep_config.h's SweepConfig derives from it, so a sweep's config is passed
// wherever these are wanted). Validated by whoever parses it (ParseSweepConfig, with each
// module's own parser and checks: hpo/samplers/sampler_kind.h).
//
// Thread-safety: plain data; const use from several threads is safe. A copy shares the
// sections' settings, which are immutable once shared (MutableSection copies on write).
#ifndef TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_
#define TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hpo/config/sweep_parameters.h"

namespace tunefleet {
namespace hpo {

using LrSpec = ParamSpec;

struct SearchSettings {
  bool maximize = true;  // metric.goal
  LrSpec lr;
  std::vector<int64_t> batch_sizes;  // ascending, unique
  // The other trainer keys searched, in file order (never lr or batch_size).
  std::vector<ParamSpec> params;
  // search.method: the sampler (hpo/samplers/all_samplers.h lists them).
  std::string method = "random_then_grid";
  // Each sampler module's own settings, by the `search` section it parses them from
  // ("random", "grid", "tpe"; SamplerSection, hpo/samplers/sampler_kind.h): opaque here, read
  // and written only by that module (through SectionOf / MutableSection). A section absent
  // here (settings built in code) reads as its defaults.
  std::map<std::string, std::shared_ptr<const void>> sections;
  int64_t max_failures_per_trial = 2;
  // The sweep's seats: trials that run at once. A climb round of fewer points fills the rest
  // with the next round's likeliest points (hpo/samplers/random_then_grid_sampler.h).
  int64_t max_concurrent_trials = 1;
};

// The settings `Spec` of section `name` in `settings`, or Spec's defaults when it holds none.
// For the module that owns the section only: it alone knows the type behind the name.
template <typename Spec>
const Spec& SectionOf(const SearchSettings& settings, const std::string& name) {
  static const Spec* const kDefaults = new Spec();
  const auto it = settings.sections.find(name);
  if (it == settings.sections.end() || it->second == nullptr) return *kDefaults;
  return *static_cast<const Spec*>(it->second.get());
}

// Section `name`'s settings, to change, unshared from any copy of `settings` (the reference
// holds until the next MutableSection of that section). For the owning module (and its tests).
template <typename Spec>
Spec& MutableSection(SearchSettings* settings, const std::string& name) {
  std::shared_ptr<const void>& slot = settings->sections[name];
  if (slot != nullptr && slot.use_count() == 1) {
    return *const_cast<Spec*>(static_cast<const Spec*>(slot.get()));  // made non-const below
  }
  auto fresh = std::make_shared<Spec>(SectionOf<Spec>(*settings, name));
  slot = fresh;
  return *fresh;
}

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_
