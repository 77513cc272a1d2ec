// The pruner registry's one list: every early_terminate type hpo knows, one entry per pruner
// module (hpo/pruners/pruner_kind.h), in the order the config's error messages name them.
// Adding a pruner adds one line to all_pruners.cc; nothing registers itself (static libraries
// would drop a self-registering object nobody references).
//
// Thread-safety: the list is immutable once made (made on first use, thread-safe).
#ifndef TUNEFLEET_HPO_PRUNERS_ALL_PRUNERS_H_
#define TUNEFLEET_HPO_PRUNERS_ALL_PRUNERS_H_

#include <vector>

#include "hpo/pruners/pruner_kind.h"

namespace tunefleet {
namespace hpo {

const std::vector<const PrunerKind*>& AllPrunerKinds();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_ALL_PRUNERS_H_
