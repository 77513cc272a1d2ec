// `trainer train --config TRAIN.yaml --dry_run --json [--check KEY=VALUE ...] [key=value ...]`:
// what a sweep asks the trainer before it starts any trial (hpo/config/trainer_query.h), so that
// hpo links none of the trainer's readers. Loads and validates the config with its overrides as
// a rank under a launcher does (in trainer_torch, which `trainer train` execs, so the loss
// registry checks task.type and its keys; the checks of train.devices that depend on the machine
// that trains are skipped, as for an agent's rank), reads the training data to count it, and
// prints one JSON object on stdout:
//
//   {"config": "configs/sbert_stsb.yaml",       the file, as given
//    "world_size": 2,                           $WORLD_SIZE (1 when unset), as the ranks see it
//    "train_examples": 5749,                    rows of task.train (0 when it cannot be read)
//    "samples_per_epoch": 5750,                 padded to a multiple of world_size, as
//                                               DistributedSampler pads them; 0 likewise
//    "data_error": "",                          why task.train could not be read, else ""
//    "keys": {"model.path": "data/bert-tiny-random", "train.lr": 2e-05, ...},
//                                               every trainer key (TrainerConfigKeys()) with its
//                                               resolved value: paths as written, numbers,
//                                               strings, booleans, lists; and the task type's
//                                               own keys ("task.margin": "0.5", as YAML text)
//    "files": [{"key": "model.path", "path": "data/bert-tiny-random", "kind": "folder"},
//              {"key": "task.train", "path": "data/...", "kind": "file"}, ...],
//                                               the files ("file") and folders ("folder") the
//                                               config names that must exist where trials run:
//                                               model.path, model.head, task.train, task.eval,
//                                               task.eval_queries/_corpus/_qrels; set ones only,
//                                               paths as written, in TrainerConfigKeys() order
//    "checks": [{"override": "train.epochs=1.5", "error": "…: expected an integer, got '1.5'"}],
//                                               each --check applied alone on top of the
//                                               overrides: "" when the config loads with it
//    "preflight": {"model": {...}, "models": [...], "least_tokens": 2, "memory": [...]}}
//                                               the model folder's and its tokenizer's check,
//                                               the model's size and the memory estimate per
//                                               batch size (trainer/commands/train_preflight.h)
//
// A config that does not load is the usual one line naming the file, line and key on stderr,
// exit 2; nothing on stdout. Exit 0 otherwise (an unreadable task.train is data_error: the data
// may exist only on the nodes the trials run on). Without --json, `--dry_run` keeps its printed
// form (trainer/commands/train_command.h). Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_COMMANDS_TRAIN_DRY_RUN_H_
#define TUNEFLEET_TRAINER_COMMANDS_TRAIN_DRY_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace trainer {

struct DryRunRequest {
  std::string config;                  // --config
  std::vector<std::string> overrides;  // key=value, in order
  std::vector<std::string> checks;     // --check KEY=VALUE, each tried alone
  int64_t world_size = 1;
};

// The JSON object above, or the config's error (InvalidArgument, one line).
absl::StatusOr<std::string> TrainDryRunJson(const DryRunRequest& request);

// Whether `args` (after `train`) ask for the JSON form: --json among the flags.
bool WantsDryRunJson(const std::vector<std::string>& args);

// The command: parses `args` (after `train`), prints the JSON; the exit code (common/cli.h).
int RunTrainDryRunJson(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_TRAIN_DRY_RUN_H_
