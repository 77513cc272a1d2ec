// Which of a trial's environment variables (a sweep's resources.env) may reach its trainer
// processes: one rule, which hpo applies when it loads a sweep (a forbidden name is an error
// there) and each agent applies to every TrialSpec it runs (a submitted spec is never trusted).
//   - Passed: the names of TrialEnvDefaults(), variables that NCCL, CUDA, OpenMP, Gloo, PyTorch
//     and tunefleet's trainer read to tune or trace a training job (NCCL_DEBUG,
//     NCCL_SOCKET_IFNAME, NCCL_IB_HCA, OMP_NUM_THREADS, TUNEFLEET_LOG_LEVEL, ...). Names, not
//     prefixes: NCCL_NET_PLUGIN is an NCCL_ variable too.
//   - Never passed, even when agent --allow_env names them (TrialEnvForbidden says why): those
//     that make the dynamic loader or a library load code of the sweep's choosing (LD_*,
//     *PLUGIN*, *INJECTION*, *PRELOAD*, GCONV_PATH, GLIBC_TUNABLES, OMP_TOOL*), and every
//     TUNEFLEET_ variable but the trial-level ones above: the others say what or where an agent
//     runs (TUNEFLEET_BIN_DIR, TUNEFLEET_AGENT_ENDPOINT, ...).
//   - Any other name: passed only when agent --allow_env names it.
// Variables the agent sets itself (RANK, CUDA_VISIBLE_DEVICES, ...) always win over a trial's.
// Thread-safety: stateless.
#ifndef TUNEFLEET_COMMON_TRIAL_ENV_H_
#define TUNEFLEET_COMMON_TRIAL_ENV_H_

#include <string>
#include <vector>

namespace tunefleet {

// The names passed without agent --allow_env, sorted.
const std::vector<std::string>& TrialEnvDefaults();
bool TrialEnvByDefault(const std::string& name);
// Why `name` never reaches a trainer ("loads code of its choosing into the trainer" or "says
// which program or socket the agent uses"); "" when it may.
std::string TrialEnvForbidden(const std::string& name);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_TRIAL_ENV_H_
