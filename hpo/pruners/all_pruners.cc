#include "hpo/pruners/all_pruners.h"

#include "hpo/pruners/hyperband_pruner.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/percentile_pruner.h"
#include "hpo/pruners/successive_halving_pruner.h"

namespace tunefleet {
namespace hpo {

const std::vector<const PrunerKind*>& AllPrunerKinds() {
  static const auto* const kKinds = new std::vector<const PrunerKind*>{
      &NopPrunerKind(),       &MedianPrunerKind(),     &SuccessiveHalvingPrunerKind(),
      &HyperbandPrunerKind(), &PercentilePrunerKind(),
  };
  return *kKinds;
}

}  // namespace hpo
}  // namespace tunefleet
