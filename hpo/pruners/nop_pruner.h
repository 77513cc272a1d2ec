// NopPruner: Optuna's NopPruner, for `early_terminate: {type: none}` (and a sweep without
// early_terminate). It never prunes and records nothing. NopPrunerKind is its registry entry
// (hpo/pruners/pruner_kind.h); NoPruning its settings, the sweep config's default.
//
// Thread-safety: a NopPruner is used from the sweep driver's thread only; the kind and the
// settings are immutable.
#ifndef TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_

#include <cstddef>

#include "hpo/pruners/pruner.h"
#include "hpo/pruners/pruner_kind.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class NopPruner : public Pruner {
 public:
  bool Prune(Study* study, size_t index) override;
};

// type none: no keys besides type; described as "none: every trial runs to the end".
const PrunerKind& NopPrunerKind();
PrunerSettingsPtr NoPruning();

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_
