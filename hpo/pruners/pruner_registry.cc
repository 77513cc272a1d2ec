#include "hpo/pruners/pruner_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "hpo/pruners/all_pruners.h"

namespace tunefleet {
namespace hpo {

const PrunerKind* FindPrunerKind(const std::string& type) {
  for (const PrunerKind* kind : AllPrunerKinds()) {
    if (kind->type == type) return kind;
  }
  return nullptr;
}

std::vector<std::string> PrunerTypes() {
  std::vector<std::string> types;
  for (const PrunerKind* kind : AllPrunerKinds()) types.push_back(kind->type);
  return types;
}

absl::StatusOr<PrunerSettingsPtr> ParseEarlyTerminate(const ConfigMap& m,
                                                      std::vector<std::string>* notes) {
  std::string type;
  RETURN_IF_ERROR(m.GetEnum("type", PrunerTypes(), &type, /*required=*/true));
  std::vector<std::pair<std::string, std::vector<std::string>>> keys_by_type;
  for (const PrunerKind* kind : AllPrunerKinds()) keys_by_type.emplace_back(kind->type, kind->keys);
  ASSIGN_OR_RETURN(std::string note, m.AllowOnlyForChoice("type", type, keys_by_type));
  if (!note.empty()) notes->push_back(note);
  return FindPrunerKind(type)->parse(m);
}

absl::StatusOr<PrunerSettingsPtr> DefaultPrunerSettings(const std::string& type) {
  const PrunerKind* kind = FindPrunerKind(type);
  if (kind == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown pruner ", type));
  ASSIGN_OR_RETURN(ConfigFile file,
                   ConfigFile::Parse(absl::StrCat("{type: ", type, "}"), "defaults"));
  ASSIGN_OR_RETURN(ConfigMap root, file.Root());
  return kind->parse(root);
}

}  // namespace hpo
}  // namespace tunefleet
