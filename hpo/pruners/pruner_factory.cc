#include "hpo/pruners/pruner_factory.h"

#include "hpo/pruners/hyperband_pruner.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/successive_halving_pruner.h"

namespace tunefleet {
namespace hpo {

std::unique_ptr<Pruner> MakePruner(const SweepConfig& config) {
  if (config.pruner == "none") return std::make_unique<NopPruner>();
  if (config.pruner == "median") return std::make_unique<MedianPruner>(config.median);
  if (config.pruner == "successive_halving") {
    return std::make_unique<SuccessiveHalvingPruner>(config.successive_halving);
  }
  if (config.pruner == "hyperband") return std::make_unique<HyperbandPruner>(config.hyperband);
  return nullptr;
}

}  // namespace hpo
}  // namespace tunefleet
