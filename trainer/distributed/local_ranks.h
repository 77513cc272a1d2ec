// `trainer train` as its own launcher (train.devices, `--gpu_ids`): starts N ranks of this
// binary on this machine, as `torchrun --nproc_per_node=N` would, and waits for them.
//
// Each rank is `binary args...` (the parent's own command line) with the torchrun environment
// (common/rank_env.h): RANK = LOCAL_RANK = i, WORLD_SIZE = LOCAL_WORLD_SIZE = N,
// MASTER_ADDR = 127.0.0.1, MASTER_PORT = a free loopback port, plus kLocalRanksEnv (so a rank
// knows its launcher was the trainer itself) and, per rank, CUDA_VISIBLE_DEVICES naming its one
// GPU when there are GPUs. So the ranks are exactly those of a torchrun job: the same
// rendezvous, the same process group.
//
// Contract between the parent and its ranks (each a common/child_process.h child):
//   - the ranks inherit stdin, stdout and stderr (rank 0 prints progress, the others print only
//     errors); each is its own process group (a terminal's Ctrl-C reaches the parent alone) and
//     gets SIGKILL from the kernel if the parent dies (PR_SET_PDEATHSIG), so none outlives it;
//   - a rank that cannot start (exec fails) ends those started and returns 1, naming it;
//   - the first rank that ends badly (an exit code other than 0, or a signal), or SIGINT /
//     SIGTERM / SIGHUP to the parent, ends every rank: SIGTERM to each rank's process group, then
//     SIGKILL after the grace (or at a second signal); the parent prints one line naming the
//     rank and how it ended (or the signal it got) and returns that rank's exit code, 128 + its
//     signal, or 128 + the parent's signal;
//   - all ranks exiting 0 returns 0.
// Thread-safety: RunLocalRanks installs process-wide SIGINT / SIGTERM / SIGHUP handlers for its
// duration; call it from the main thread, once.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_LOCAL_RANKS_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_LOCAL_RANKS_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace trainer {

// Set to "1" in the ranks the trainer starts itself.
inline constexpr char kLocalRanksEnv[] = "TUNEFLEET_LOCAL_RANKS";

struct LocalRanksSpec {
  std::string binary;             // what each rank runs (the parent's /proc/self/exe)
  std::vector<std::string> args;  // after argv[0]
  int ranks = 1;
  // Per rank, what its CUDA_VISIBLE_DEVICES says (its one GPU); empty: the variable is left
  // as inherited (CPU ranks).
  std::vector<std::string> cuda_visible_devices;
  // OMP_NUM_THREADS for each rank when the parent's environment does not set it; 0: leave it.
  int omp_threads = 0;
  std::chrono::milliseconds grace{5000};
};

// The ids for each rank's CUDA_VISIBLE_DEVICES: the listed GPUs, else the first `ranks` GPUs,
// as `visible` (common/gpu_detect.h's GpuInfo::id of this process's GPUs) names them; empty
// when there are no GPUs. `gpu_ids` index `visible`.
std::vector<std::string> RankGpus(int ranks, const std::vector<int64_t>& gpu_ids,
                                  const std::vector<std::string>& visible);

// Starts the ranks and waits for them; returns the exit code for the parent. Errors (one line
// each) go to stderr prefixed with `program`.
int RunLocalRanks(const LocalRanksSpec& spec, const std::string& program);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_LOCAL_RANKS_H_
