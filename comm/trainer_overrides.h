// Typed trainer overrides (TrialSpec.overrides, comm/proto/messages.proto) and the trainer's
// override arguments `key=VALUE` (VALUE read as YAML, common/yaml_config.h), both ways:
//
//   double  3e-05 -> "train.lr=3e-05"; whole ones keep a ".0" ("1.0"), so they read back as
//           doubles; inf and nan as YAML's .inf, -.inf, .nan
//   int64   "train.batch_size=32"
//   bool    "train.shuffle=true"
//   string  plain when YAML reads it back as that string ("model.pooling=cls",
//           "model.path=/data/bert"), else double-quoted with JSON's escapes
//           ("x=\"1e-3\"", "x=\"true\"", "x=\"\"", "x=\"a: b\"")
//   yaml    a list or mapping as written ("train.devices=[0, 1]")
//
// and back: a quoted scalar is a string; a plain one is a bool (true/false in YAML 1.2's
// spellings), an int64, a double (YAML's float forms) or else a string; a list or mapping is
// yaml. The key is everything before the first '=' (dots and Hydra's +/++ prefixes included).
// So ParseOverrideArg(OverrideArg(o)) == o for every typed override, and the trainer reads
// OverrideArg(o) as the value o holds. Thread-safety: pure functions.
#ifndef TUNEFLEET_COMM_TRAINER_OVERRIDES_H_
#define TUNEFLEET_COMM_TRAINER_OVERRIDES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace comm {

// "key=VALUE" (an override with no value set: "key=", YAML's null).
std::string OverrideArg(const TrainerOverride& o);

// The typed override of "key=VALUE"; an error for text without '=' or an empty key, or a VALUE
// that is not YAML.
absl::StatusOr<TrainerOverride> ParseOverrideArg(const std::string& arg);

// The trainer's arguments for a trial: spec.argv, then each of spec.overrides as OverrideArg.
std::vector<std::string> TrainerArgv(const TrialSpec& spec);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_TRAINER_OVERRIDES_H_
