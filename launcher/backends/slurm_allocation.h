// The Slurm allocation the head runs inside (salloc or an sbatch script), read from the
// environment Slurm gives a job, for `head --start_agents slurm`:
//   hosts: SLURM_JOB_NODELIST (else SLURM_NODELIST), expanded (launcher/backends/slurm_hostlist.h);
//   slots: the GPUs the job has on each node, from the first of
//     SLURM_GPUS_ON_NODE ("2"), SLURM_JOB_GPUS (the batch node's GPU ids, "0,1": their count),
//     SLURM_GPUS_PER_NODE ("2" or "a100:2", as sbatch --gpus-per-node sets it) and the gres
//     SLURM_JOB_GRES / SLURM_GRES ("gpu:2", "gpu:a100:2,...": the gpu entry's count);
//     0 when none says (the agents count their GPUs, or run one CPU slot, or the head's --slots).
// Outside an allocation (no SLURM_JOB_ID) or with a malformed variable: an InvalidArgument naming
// the variable.
// Thread-safety: stateless.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_SLURM_ALLOCATION_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_SLURM_ALLOCATION_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace launcher {

struct SlurmAllocation {
  std::string job_id;
  std::vector<std::string> nodes;
  int gpus_per_node = 0;    // 0: not known from the environment
  std::string gpus_source;  // the variable it came from ("SLURM_GPUS_ON_NODE=2"), or ""
};

// `getenv` reads a variable (null when unset); std::getenv by default.
using EnvReader = std::function<const char*(const char*)>;
absl::StatusOr<SlurmAllocation> ReadSlurmAllocation(const EnvReader& getenv = nullptr);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_SLURM_ALLOCATION_H_
