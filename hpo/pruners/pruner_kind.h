// What a pruner module provides besides its Pruner: its "kind", the entry that the registry
// (hpo/pruners/all_pruners.cc) lists, and the settings object it parses. A kind names its
// `early_terminate.type`, the YAML keys it takes, and how it parses and validates them into a
// PrunerSettings; the settings resolve against the sweep's resource axis, describe themselves
// (the dry run's line, the journal's "pruner" study attr) and build the Pruner. Nothing outside
// a pruner's module needs to know its type name or its settings.
//
// Thread-safety: kinds are immutable statics; settings are immutable once parsed and may be
// shared between threads (std::shared_ptr<const PrunerSettings>). Each Pruner that
// MakePruner returns is used from one thread.
#ifndef TUNEFLEET_HPO_PRUNERS_PRUNER_KIND_H_
#define TUNEFLEET_HPO_PRUNERS_PRUNER_KIND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "hpo/pruners/pruner.h"

namespace tunefleet {
namespace hpo {

// The sweep's resource axis (samples; hpo/config/sweep_config.h) as a pruner's settings resolve
// against it.
struct ResourceAxis {
  // The samples of one evaluation interval (the synthetic trainer's samples_per_step); 0 when
  // unknown (the training data cannot be read here).
  int64_t interval = 0;
};

class PrunerSettings : public std::enable_shared_from_this<PrunerSettings> {
 public:
  virtual ~PrunerSettings() = default;

  // The early_terminate.type these settings are of ("median").
  virtual std::string type() const = 0;
  // False only for a pruner that never prunes (type none).
  virtual bool prunes() const { return true; }
  // The settings with their resources in samples (e.g. hyperband's min_resource "auto" and
  // W&B's min_iter / max_iter); errors start with `path` (the sweep file). The default keeps
  // these settings as they are. Must be called once, before MakePruner, by whoever loads the
  // sweep (LoadSweepConfig).
  virtual absl::StatusOr<std::shared_ptr<const PrunerSettings>> Resolve(
      const ResourceAxis& axis, const std::string& path) const;
  // The dry run's words for this pruner (hpo/config/sweep_plan.h), for a study that maximizes or
  // not.
  virtual std::string Describe(bool maximize) const = 0;
  // The settings as the journal's study user attr "pruner", a JSON object whose first field is
  // "type"; bench/optuna_policy.py builds Optuna's pruner from it.
  virtual std::string Json() const = 0;
  // A new pruner with these settings.
  virtual std::unique_ptr<Pruner> MakePruner() const = 0;
};

using PrunerSettingsPtr = std::shared_ptr<const PrunerSettings>;

struct PrunerKind {
  std::string type;               // early_terminate.type
  std::vector<std::string> keys;  // the early_terminate keys it takes, "type" included
  // Parses and validates early_terminate (its keys already checked against `keys`); errors
  // name the dotted key (ConfigMap::Error).
  absl::StatusOr<PrunerSettingsPtr> (*parse)(const ConfigMap& m);
};

// {"type": "TYPE", "k1": v1, ...}: a JSON object in Python json.dumps' spacing; each value is
// already JSON text.
std::string PrunerJson(const std::string& type,
                       const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_PRUNERS_PRUNER_KIND_H_
