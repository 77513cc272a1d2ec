// MakePruner: the pruner a sweep's `early_terminate` names (SweepConfig::pruner):
// "none" -> NopPruner, "median" -> MedianPruner(config.median),
// "successive_halving" -> SuccessiveHalvingPruner(config.successive_halving),
// "hyperband" -> HyperbandPruner(config.hyperband).
// Any other name (ParseSweepConfig lets none through) gives nullptr. The study's direction is
// not taken from the config: pruners read Study::maximize.
//
// Thread-safety: the returned pruner is used from the sweep driver's thread only.
#ifndef TUNEFLEET_HPO_PRUNERS_PRUNER_FACTORY_H_
#define TUNEFLEET_HPO_PRUNERS_PRUNER_FACTORY_H_

#include <memory>

#include "hpo/pruner.h"
#include "hpo/sweep_config.h"

namespace tunefleet {
namespace hpo {

std::unique_ptr<Pruner> MakePruner(const SweepConfig& config);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_PRUNER_FACTORY_H_
