// NopPruner: Optuna's NopPruner, for `early_terminate: {type: none}`. It never prunes and
// records nothing.
//
// Thread-safety: used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_

#include <cstddef>

#include "hpo/pruner.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class NopPruner : public Pruner {
 public:
  bool Prune(Study* study, size_t index) override;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_NOP_PRUNER_H_
