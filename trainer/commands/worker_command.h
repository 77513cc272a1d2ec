// `trainer worker`: a warm trainer worker. The agent starts one per slot (with the slot's
// environment) and hands it the sweep's trials one at a time, so that a trial costs little more
// than its steps: no process start, no LibTorch / CUDA initialisation per trial.
//
// Needs TUNEFLEET_AGENT_ENDPOINT and TUNEFLEET_WORKER_SLOT; registers with the agent as
// Register{WORKER, pid, slot} (trainer/distributed/worker_channel.h). For each RunTrial it
//   - sets the trial's environment (restoring the previous values, or unsetting, afterwards),
//   - points stdout and stderr at the trial's log_path (folders made, appended; back after),
//   - clears the log context (trial, rank from the trial's RANK) and resets the process state a
//     fresh process would have: LibTorch's default generators (seeded as at start-up) and its
//     intra-op thread count (OMP_NUM_THREADS of the trial, else the worker's),
//   - runs argv exactly as `trainer train ARGV...` would (trainer/commands/train_command.h;
//     argv[0] must be "train", else exit code 2 with a line in the log), which reports to the
//     agent on its own TRAINER connection,
//   - answers TrialDone{run_id, exit_code, retiring, stderr_tail: the log's last 4 KiB}.
// Between trials it keeps the last model folder's weights in host memory
// (trainer/model/checkpoint_cache.h), so a trial from the same folder does not read them again.
// It retires (TrialDone.retiring, then exits 0) after a trial that failed (exit code != 0: a
// failure may leave the process in any state, e.g. out of memory) or after
// TUNEFLEET_WORKER_MAX_TRIALS trials (default 16). Between trials it exits 0 on SIGTERM or
// SIGINT, on the agent's Shutdown, and when its parent (the agent) is gone; during a trial a
// SIGTERM ends it as it ends a fresh `trainer train` (the agent's cancel). Exit codes: 0; 2 for
// a bad command line or environment; 1 when the agent cannot be reached.
#ifndef TUNEFLEET_TRAINER_COMMANDS_WORKER_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_WORKER_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// The subcommand's one-line summary, shared by `trainer --help` and `trainer worker --help`.
inline constexpr char kWorkerSummary[] =
    "Runs trials the agent hands it, one at a time, in this process (warm worker)";

int RunWorker(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_WORKER_COMMAND_H_
