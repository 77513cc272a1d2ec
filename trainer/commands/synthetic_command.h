// `trainer synthetic`: the synthetic trainer's command line (trainer/data/synthetic.h). Its flags
// (--steps, --seconds_per_step, --noise, --seed, --lr_effective, --batch_size,
// --samples_per_step, --metric) are checked first: a bad one is one line and exit 2. Under an
// agent (trainer/distributed/agent_client.h's environment) rank 0 reports to it; the other ranks
// run the same steps silently. Exit codes (common/cli.h): 0, 2 for a bad command line, 1 when
// the agent cannot be reached or the run fails.
// Thread-safety: runs on the calling thread; one at a time (it sets the log's trial).
#ifndef TUNEFLEET_TRAINER_COMMANDS_SYNTHETIC_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_SYNTHETIC_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// args: everything after `trainer synthetic`.
int RunSyntheticCommand(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_SYNTHETIC_COMMAND_H_
