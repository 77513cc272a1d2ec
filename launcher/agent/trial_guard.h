// What a trial may ask of an agent: the agent runs whatever a submitted TrialSpec says as its
// own user, so the spec's environment and paths pass through here first.
//
// Environment: a trial's own variables reach its ranks as common/trial_env.h says: the names a
// training job tunes (NCCL_DEBUG, NCCL_SOCKET_IFNAME, OMP_NUM_THREADS, ...) and those the
// agent's --allow_env names, never one that loads code (LD_*, *PLUGIN*, *INJECTION*, ...) or an
// agent-level TUNEFLEET_ variable, named or not; the variables the agent sets itself (the
// torchrun set, CUDA_VISIBLE_DEVICES, TUNEFLEET_AGENT_ENDPOINT, ...) always win.
//
// Paths (TrialSpec.log_dir, TrialSpec.fetch_back): they must lie inside one of the folders
// the agent serves (its runtime folder, its --log_dir, its working directory, $HOME and
// --allow_dir;
// compared after resolving every existing component, links included), and the part of the
// path that exists must belong to the agent's user: the agent never writes into, or serves
// from, another user's folder.
// Thread-safety: stateless.
#ifndef TUNEFLEET_LAUNCHER_AGENT_TRIAL_GUARD_H_
#define TUNEFLEET_LAUNCHER_AGENT_TRIAL_GUARD_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {
namespace launcher {

// The trial's variables that may reach its ranks; the others are added to *dropped.
std::map<std::string, std::string> FilterTrialEnv(const std::map<std::string, std::string>& env,
                                                  const std::set<std::string>& allowed_names,
                                                  std::vector<std::string>* dropped);

// OK when `path` lies inside one of `roots` and what exists of it belongs to this user;
// otherwise PermissionDenied naming the path and why. `what` names it ("log_dir").
absl::Status CheckTrialPath(const std::string& what, const std::string& path,
                            const std::vector<std::string>& roots);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_TRIAL_GUARD_H_
