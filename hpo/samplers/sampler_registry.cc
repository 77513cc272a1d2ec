#include "hpo/samplers/sampler_registry.h"

#include "common/logging.h"
#include "common/status_macros.h"
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

std::vector<std::string> SamplerSections() {
  std::vector<std::string> sections;
  for (const SamplerKind* kind : AllSamplerKinds()) {
    if (!kind->section.empty()) sections.push_back(kind->section);
  }
  return sections;
}

absl::Status ParseSamplerSections(const ConfigMap& search, SearchSettings* settings) {
  for (const SamplerKind* kind : AllSamplerKinds()) {
    if (kind->section.empty()) continue;
    ASSIGN_OR_RETURN(ConfigMap section, search.GetOptionalMap(kind->section));
    RETURN_IF_ERROR(kind->parse_section(section, settings));
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
