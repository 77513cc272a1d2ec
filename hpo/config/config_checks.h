// Small validators for typed config values, shared by the sweep config and the pruner modules:
// each error names the dotted key, as ConfigMap::Error does ("early_terminate.eta: must be >= 2,
// got 1").
//
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_CONFIG_CONFIG_CHECKS_H_
#define TUNEFLEET_HPO_CONFIG_CONFIG_CHECKS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace hpo {

// OK when value >= low, else "KEY: must be >= LOW, got VALUE".
absl::Status AtLeast(const ConfigMap& m, const std::string& key, int64_t value, int64_t low);
// The optional integer `key` (else *value keeps its default), which must be >= low.
absl::Status GetAtLeast(const ConfigMap& m, const std::string& key, int64_t* value, int64_t low);
// A mapping of environment variables a trial's ranks get (resources.env, trainer.env): each name
// a variable's name that agents may pass (common/trial_env.h), listed once; into *out.
absl::Status GetTrialEnv(const ConfigMap& env, std::map<std::string, std::string>* out);
// A pruner's optional resource on the samples axis: "auto" (*value keeps its value, 0 by
// convention) or an integer >= 1.
absl::Status GetResourceOrAuto(const ConfigMap& m, const std::string& key, int64_t* value);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_CONFIG_CHECKS_H_
