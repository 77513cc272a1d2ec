// What a sampler module provides besides its Sampler: its "kind", the entry that the registry
// (hpo/samplers/all_samplers.cc) lists. A kind names its `search.method` (W&B's top-level
// `method` too), checks the search settings it uses once they are parsed, describes itself
// (the dry run's lines; the plan's size) and builds its Sampler. Nothing outside a sampler's
// module needs to know its method name.
//
// The settings a kind reads are SearchSettings (hpo/samplers/search_settings.h): the searched
// parameters, and the sections of `search` it lists (`sections`). A section belongs to one
// sampler module, which declares it here (SamplerSection), parses and validates it into
// settings of its own type, and alone reads them (SectionOf); the sweep config and the engine
// hold them opaquely. Several kinds may read one section (search.random: every method that
// begins with random points; search.grid: those with a grid).
//
// Thread-safety: kinds are immutable statics and their functions pure; each Sampler that
// `make` returns is used from one thread.
#ifndef TUNEFLEET_HPO_SAMPLERS_SAMPLER_KIND_H_
#define TUNEFLEET_HPO_SAMPLERS_SAMPLER_KIND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

// A section of `search` ("grid" for search.grid) and its parser, which reads the section (empty
// when absent) into its module's settings (held in SearchSettings::sections under `name`),
// naming the dotted key in errors. Every section of every kind is parsed whatever the method,
// so a mistake in one is never silent.
struct SamplerSection {
  std::string name;
  absl::StatusOr<std::shared_ptr<const void>> (*parse)(const ConfigMap& section);
};

struct SamplerKind {
  std::string method;  // search.method
  // Checks the parsed settings beyond each key's own range (e.g. that the random phase runs
  // at least top_k trials); `search` is the search section, for errors that name the dotted
  // key (ConfigMap::Error).
  absl::Status (*validate)(const ConfigMap& search, const SearchSettings& settings);
  // The dry run's lines under "  search        METHOD" (hpo/config/sweep_plan.h), each
  // "    WHAT        words\n"; may be empty.
  std::string (*describe)(const SearchSettings& settings);
  // An upper bound on the trials it proposes, cheap for any sizes (no loop over the points).
  int64_t (*max_planned_trials)(const SearchSettings& settings);
  // How many random points lead its plan: trial point i < n is RandomSampler::PointFor(i)
  // with search.random.seed (the dry run lists them).
  int64_t (*random_points)(const SearchSettings& settings);
  // A new sampler for these (validated) settings.
  std::unique_ptr<Sampler> (*make)(const SearchSettings& settings);
  // The sections of `search` it reads (each an immutable static of its module).
  std::vector<const SamplerSection*> sections;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SAMPLER_KIND_H_
