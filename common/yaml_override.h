// One Hydra-style override of a YAML tree, the rules behind ConfigFile::ApplyOverride
// (common/yaml_config.h):
//   key=value     sets key (its parents become mappings as needed)
//   +key=value    adds key; an error when it is already set
//   ++key=value   adds or sets key
//   ~key          removes key; ~key=value only when it holds value (1e-5 and 1.0e-05 match)
// A dotted key walks mappings; at each level the longest run of parts that the file writes as
// one key with dots in it (`parameters: {train.weight_decay: ...}`) is taken first. Values are
// parsed as YAML. Errors are InvalidArgument, start with `where`, and name the line of the
// value in the file or the earlier override that set it.
// Thread-compatible (it mutates `root`).
#ifndef TUNEFLEET_COMMON_YAML_OVERRIDE_H_
#define TUNEFLEET_COMMON_YAML_OVERRIDE_H_

#include <map>
#include <string>

#include "absl/status/status.h"
#include "yaml-cpp/yaml.h"

namespace tunefleet {

// Applies `assignment` to `root` (a mapping; YAML::Node shares its tree, so the caller's root
// changes). `earlier` maps the dotted keys set by earlier overrides to how they were shown.
// On success *set_key is the dotted key set or added, empty when one was removed.
absl::Status ApplyYamlOverride(YAML::Node root, const std::string& assignment,
                               const std::string& where,
                               const std::map<std::string, std::string>& earlier,
                               std::string* set_key);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_YAML_OVERRIDE_H_
