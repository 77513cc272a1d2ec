// The pruner registry's look-ups over AllPrunerKinds (hpo/pruners/all_pruners.h): the sweep
// config parses `early_terminate` here, and anything that needs a pruner by name finds its
// kind here, without knowing any type name itself.
//
// Thread-safety: pure functions over immutable kinds.
#ifndef TUNEFLEET_HPO_PRUNERS_PRUNER_REGISTRY_H_
#define TUNEFLEET_HPO_PRUNERS_PRUNER_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "hpo/pruners/pruner_kind.h"

namespace tunefleet {
namespace hpo {

// The kind whose early_terminate.type is `type`; null if none.
const PrunerKind* FindPrunerKind(const std::string& type);
// The registered types, in registry order.
std::vector<std::string> PrunerTypes();

// Parses the `early_terminate` mapping: its required `type` (one of PrunerTypes()), the keys
// that type takes (ConfigMap::AllowOnlyForChoice: a note for keys an override of the type
// dropped is appended to *notes), and that kind's settings, unresolved.
absl::StatusOr<PrunerSettingsPtr> ParseEarlyTerminate(const ConfigMap& m,
                                                      std::vector<std::string>* notes);

// The settings of `type` with every key at its default, unresolved (for a benchmark that runs
// a pruner the sweep does not configure); an error for an unknown type or one that needs a
// key.
absl::StatusOr<PrunerSettingsPtr> DefaultPrunerSettings(const std::string& type);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_PRUNER_REGISTRY_H_
