// The agent's command line: its flags as given (AgentFlags, registered on a CommandLine by
// AddAgentFlags, names and defaults unchanged) and the options they validate into
// (AgentOptions::FromFlags). Every error is a usage error (the agent exits 2) of one line
// naming the flag, checked in this order: --head (required; an endpoint; another user's private
// socket is refused now), --name (1-64 letters, digits, '.', '-' or '_'), --allow_env (never a
// variable common/trial_env.h forbids), --slots, --prewarm_workers, --kill_grace_ms, --trainer (an
// executable file), --gpu_ids / --exclude_gpu_ids (one or the other, each a list of GPU indices),
// --head_grace_s, --keys (a client key folder), the trainer (beside this agent unless --trainer
// says), and last --runtime_dir (made private: mkdir 0700, refused when another user owns it or
// it is a link). Without --name the agent takes the host's name ("local" when that name is no
// safe file name).
//
// Thread-safety: FromFlags is a function of the flags, the environment and the file system;
// call it once at start-up.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_OPTIONS_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_OPTIONS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/cli.h"

namespace tunefleet {
namespace launcher {

struct AgentFlags {
  std::string head, name, keys, trainer, log_dir, address, cache_dir, runtime_dir, allow_dirs,
      allow_env, gpu_ids, exclude_gpu_ids;
  int64_t slots = 0, kill_grace_ms = 5000, head_grace_s = 300, prewarm_workers = 0;
  bool detach = false;
  bool mps = true;
  bool prewarm_mps = false;
  bool programs = true;
};

// Adds the agent's flags to `cli`, writing to `flags` (which must outlive the parse).
void AddAgentFlags(CommandLine* cli, AgentFlags* flags);

struct AgentOptions {
  std::string head;  // the endpoint as parsed
  std::string name;  // --name, else the host's name
  std::string keys;
  std::string trainer;      // an executable file
  std::string runtime_dir;  // --runtime_dir (made private), or empty: RUNTIME/agent-NAME
  std::string log_dir, address, cache_dir;
  std::vector<std::string> allow_dirs;  // --allow_dir's folders
  std::set<std::string> allow_env;
  std::vector<int> gpu_ids, exclude_gpu_ids;
  int slots = 0;
  int prewarm_workers = 0;   // --prewarm_workers: blank warm workers started at once
  bool prewarm_mps = false;  // --prewarm_mps: the MPS daemon and server started at once
  absl::Duration kill_grace;
  absl::Duration head_grace;
  bool detach = false;
  bool mps = true;
  bool programs = true;  // --noprograms: tunefleet's trainer only (TrialSpec.program refused)

  static absl::StatusOr<AgentOptions> FromFlags(const AgentFlags& flags);
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_OPTIONS_H_
