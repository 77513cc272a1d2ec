// The processes of a program trial (TrialSpec.program: a training program of the user's own,
// hpo/program_command.h) on one agent, and their environment:
//
//   launch per_rank (default): one process a local rank, started as torchrun starts a worker:
//     RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE MASTER_ADDR
//     MASTER_PORT (common/rank_env.h), CUDA_VISIBLE_DEVICES of its GPU ("" on CPU slots);
//   launch once: one process for all of this agent's ranks, for programs that start their own
//     (torchrun, accelerate, the DeepSpeed launcher): WORLD_SIZE (the trial's ranks),
//     LOCAL_WORLD_SIZE (this agent's), GROUP_RANK GROUP_WORLD_SIZE MASTER_ADDR MASTER_PORT,
//     CUDA_VISIBLE_DEVICES of all its GPUs, and torchrun's own settings as PET_NNODES,
//     PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT (torchrun reads an
//     option it is not given from PET_<OPTION>), so a bare `torchrun train.py` joins the trial.
//
// Every process also gets TUNEFLEET_TRIAL_DIR (the trial's folder, made here), TUNEFLEET_PARAMS
// (TrialSpec.params_json) and TUNEFLEET_METRICS (the file rank 0 appends its reports to: made
// empty on rank 0's agent, which follows it, launcher/agent/metrics_follower.h), beside the
// variables every rank gets (the caller's `env`). The processes start in the program's workdir;
// the program is found on the agent's PATH unless its name holds a '/'. Output and errors go to
// LOG_DIR/trial-N/rank-R.log (R: the first of a process's ranks). The trial's folder must lie
// where the agent writes (launcher/agent/trial_guard.h), as its log folder must.
// Thread-safety: stateless.
#ifndef TUNEFLEET_LAUNCHER_AGENT_PROGRAM_LAUNCH_H_
#define TUNEFLEET_LAUNCHER_AGENT_PROGRAM_LAUNCH_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"
#include "common/child_process.h"
#include "common/rank_env.h"

namespace tunefleet {
namespace launcher {

struct ProgramLaunch {
  RankPlace place;                         // the first local rank's; master and group filled in
  std::vector<std::string> gpus;           // CUDA_VISIBLE_DEVICES of each local rank's slot
  std::map<std::string, std::string> env;  // what every rank of the run gets besides
  std::string log_dir;                     // LOG_DIR: logs go to LOG_DIR/trial-N/rank-R.log
  std::vector<std::string> allow_dirs;     // where the trial's folder may lie
};

struct ProgramProcess {
  ProcessSpec spec;
  std::vector<int> locals;  // the local ranks (indices into Assign.ranks) it stands for
};

// Makes the trial's folder (and, on the agent of rank 0, the empty metrics file) and returns the
// processes to start. Errors (the trial cannot start here; `*refused` when starting it again
// cannot help): the folder refused or not made, the program not found or not executable.
absl::StatusOr<std::vector<ProgramProcess>> PrepareProgram(const comm::Assign& assign,
                                                           const ProgramLaunch& launch,
                                                           bool* refused);

// Whether this agent runs the trial's rank 0 (it follows the metrics file).
bool LeadsProgram(const comm::Assign& assign);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_PROGRAM_LAUNCH_H_
