#include "hpo/pruners/nop_pruner.h"

#include <memory>
#include <string>

namespace tunefleet {
namespace hpo {
namespace {

class NopSettings : public PrunerSettings {
 public:
  std::string type() const override { return "none"; }
  bool prunes() const override { return false; }
  std::string Describe(bool) const override { return "none: every trial runs to the end"; }
  std::string Json() const override { return PrunerJson("none", {}); }
  std::unique_ptr<Pruner> MakePruner() const override { return std::make_unique<NopPruner>(); }
};

absl::StatusOr<PrunerSettingsPtr> Parse(const ConfigMap&) { return NoPruning(); }

}  // namespace

bool NopPruner::Prune(Study*, size_t) { return false; }

const PrunerKind& NopPrunerKind() {
  static const PrunerKind* const kKind = new PrunerKind{"none", {"type"}, &Parse};
  return *kKind;
}

PrunerSettingsPtr NoPruning() {
  static const PrunerSettingsPtr* const kNone =
      new PrunerSettingsPtr(std::make_shared<NopSettings>());
  return *kNone;
}

}  // namespace hpo
}  // namespace tunefleet
