// `hpo sweep SWEEP.yaml --multirun KEY=a,b,c ...`: Hydra's basic sweeper (every combination of
// the comma-separated values) mapped onto the sweep's search space.
//
// Under --multirun an override whose key is not a section of the sweep file (`sections`: name,
// metric, search, ...) names a parameter: lr, batch_size, or a trainer key as `parameters`
// takes it (train.weight_decay, or its last part weight_decay; hpo/config/sweep_parameters.h).
// KEY=a,b,c becomes `parameters.KEY: {values: [a, b, c]}` and KEY=a `{values: [a]}`, replacing
// the file's entry for that parameter (whatever its spelling: lr, train.lr, train: {lr: ...}),
// and the search method becomes grid. The sweep therefore runs exactly the combinations listed
// on the command line, as Hydra does: a parameter of the file that the command line does not
// name must take one value (`values: [x]`, or int with min = max), else it is an error at its
// line naming the fix (sweep it, KEY=a,b, or fix it, KEY=a), never a silent multiplication of
// the trials. Overrides of the file's sections (search.random.trials=4, early_terminate.type=none,
// +key=value, ~key) apply first, as without --multirun. Errors name the override as typed.
//
// Thread-safety: stateless functions.
#ifndef TUNEFLEET_HPO_CONFIG_MULTIRUN_H_
#define TUNEFLEET_HPO_CONFIG_MULTIRUN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"
#include "hpo/config/sweep_parameters.h"

namespace tunefleet {
namespace hpo {

// Applies `overrides` to `file` as described above; `trainer_keys` names the trainer's keys.
absl::Status ApplyMultirunOverrides(const std::vector<std::string>& overrides,
                                    const std::vector<std::string>& sections, ConfigFile* file,
                                    const TrainerKeys& trainer_keys = {});

// VALUE split at the commas outside brackets, braces, parentheses and quotes:
// "1e-5,3e-5" -> {"1e-5", "3e-5"}; "[16,32]" -> {"[16,32]"}. Pieces are trimmed.
std::vector<std::string> SplitSweepValues(const std::string& text);

// Without --multirun: `status`, with " (to sweep over comma-separated values, add --multirun)"
// appended when its message names one of `overrides` whose value holds such a comma.
absl::Status AddMultirunHint(const absl::Status& status, const std::vector<std::string>& overrides);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_CONFIG_MULTIRUN_H_
