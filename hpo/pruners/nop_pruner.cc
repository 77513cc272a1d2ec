#include "hpo/pruners/nop_pruner.h"

namespace tunefleet {
namespace hpo {

bool NopPruner::Prune(Study*, size_t) { return false; }

}  // namespace hpo
}  // namespace tunefleet
