// Tests ask the trainer in-process: the same dry run that `trainer train --dry_run --json` prints
// (trainer/commands/train_dry_run.h), without the process boundary, so that sweep tests need
// no trainer binary beside them. tests/integration/train_dry_run_json_test and bad_input_test
// run the binaries. Thread-safety: stateless.
#ifndef TUNEFLEET_TESTS_HPO_TRAINER_IN_PROCESS_H_
#define TUNEFLEET_TESTS_HPO_TRAINER_IN_PROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/trainer_query.h"

namespace tunefleet {
namespace hpo {

// Answers as TrainerBinary() does: the JSON, or the trainer's error as InvalidArgument.
AskTrainer InProcessTrainer();

// LoadSweepConfig asking InProcessTrainer().
absl::StatusOr<SweepConfig> LoadSweepConfigInProcess(const std::string& path,
                                                     const std::vector<std::string>& overrides = {},
                                                     bool multirun = false);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_HPO_TRAINER_IN_PROCESS_H_
