// `trainer train --config TRAIN.yaml [--resume] [--dry_run [--json]] [key=value ...]` (the CLI
// contract: docs/CLI.md, "trainer train"): loads and validates the trainer YAML with its
// overrides, picks the device (cuda:LOCAL_RANK when there is a GPU, else the CPU), and runs
// trainer/train/train_loop.h, reporting to the agent when TUNEFLEET_AGENT_ENDPOINT is set. Not
// under a launcher (no RANK, WORLD_SIZE or agent), train.devices > 1 rank (or `--gpu_ids 0,1`)
// makes it start and wait for the ranks itself instead (trainer/distributed/local_ranks.h). Prints
// the config, the memory estimate, progress lines and a summary with the measured peak memory. Exit
// codes (common/cli.h): 0 (also when a stop decision ended it); 2 for a bad command line, config or
// input file (one line naming it); 3 when out of memory; 1 for other failures. `--dry_run --json`
// is trainer/commands/train_dry_run.h.
#ifndef TUNEFLEET_TRAINER_COMMANDS_TRAIN_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_TRAIN_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

int RunTrain(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_TRAIN_COMMAND_H_
