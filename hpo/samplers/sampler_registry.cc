#include "hpo/samplers/sampler_registry.h"

#include <algorithm>

#include "common/logging.h"
#include "common/status_macros.h"
#include "hpo/samplers/all_samplers.h"
#include "hpo/samplers/random_sampler.h"

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

namespace {

// Every kind's sections, each once, in registry order.
std::vector<const SamplerSection*> AllSections() {
  std::vector<const SamplerSection*> sections;
  for (const SamplerKind* kind : AllSamplerKinds()) {
    for (const SamplerSection* section : kind->sections) {
      if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
        sections.push_back(section);
      }
    }
  }
  return sections;
}

}  // namespace

std::vector<std::string> SamplerSections() {
  std::vector<std::string> names;
  for (const SamplerSection* section : AllSections()) names.push_back(section->name);
  return names;
}

absl::Status ParseSamplerSections(const ConfigMap& search, SearchSettings* settings) {
  for (const SamplerSection* section : AllSections()) {
    ASSIGN_OR_RETURN(ConfigMap m, search.GetOptionalMap(section->name));
    ASSIGN_OR_RETURN(settings->sections[section->name], section->parse(m));
  }
  return SamplerKindOf(*settings).validate(search, *settings);
}

std::vector<Params> LeadingRandomPoints(const SearchSettings& settings, const SearchSpace& space,
                                        int64_t at_most) {
  const int64_t n = std::min(SamplerKindOf(settings).random_points(settings), at_most);
  const RandomSampler sampler(static_cast<uint64_t>(RandomSpecOf(settings).seed), n);
  std::vector<Params> points;
  for (int64_t i = 0; i < n; ++i) points.push_back(sampler.PointFor(i, space));
  return points;
}

}  // namespace hpo
}  // namespace tunefleet
