// The pruner interface, in the shape of Optuna's BasePruner: after a trial reports an
// intermediate value, Prune says whether it should stop now.
//
// Thread-safety: used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_PRUNERS_PRUNER_H_
#define TUNEFLEET_HPO_PRUNERS_PRUNER_H_

#include <cstddef>

#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class Pruner {
 public:
  virtual ~Pruner() = default;
  // Optuna's BasePruner.prune(study, trial) for the RUNNING trial study->trials[index], whose
  // latest intermediate value is already recorded. Like Optuna, a pruner may record system
  // attributes on that trial (successive halving's "completed_rung_N"); the caller journals
  // any it finds new.
  virtual bool Prune(Study* study, size_t index) = 0;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_PRUNER_H_
