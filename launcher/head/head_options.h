// The head's command line: its flags as given (HeadFlags, registered on a CommandLine by
// AddHeadFlags, names and defaults unchanged) and the options they validate into
// (HeadOptions::FromFlags). Every error is a usage error (the head exits 2) of one line naming
// the flag, checked in this order: --gen_keys (alone: nothing else is checked), the runtime
// folder (made when --bind or --log_dir is left out), --bind (an unkeyed TCP bind needs --keys
// or --insecure), --start_agents (a registered backend, launcher/backends/backend_registry.h,
// which may refuse other flags, e.g. --nodes), --slots, the backends' own flags (each
// backend declares and checks its own: LauncherBackend::flags), --heartbeat_ms,
// --agent_timeout_ms, and last the agent binary (beside this head, when the backend starts
// agents and --agent is not given).
//
// Thread-safety: FromFlags is a function of the flags, the environment and the file system;
// call it once at start-up.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_OPTIONS_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/cli.h"
#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

struct HeadFlags {
  std::string nodes, bind, keys, gen_keys, start_agents = "ssh";
  // The backends' own flags by name (AllBackendFlags); one left out takes its default.
  std::map<std::string, std::string> backend_flags;
  std::string endpoint_file, agent_binary, log_dir, include, exclude;
  int64_t heartbeat_ms = 1000, agent_timeout_ms = 30000, slots = 0;
  bool insecure = false;
};

// Adds the head's flags to `cli`, writing to `flags` (which must outlive the parse).
void AddHeadFlags(CommandLine* cli, HeadFlags* flags);

struct HeadOptions {
  // --gen_keys DIR: write a key folder there and exit; no other field is set.
  std::string gen_keys;
  std::string bind;  // the endpoint as parsed (tcp://localhost:0 -> tcp://127.0.0.1:0)
  std::string keys;
  bool insecure = false;
  const LauncherBackend* backend = nullptr;  // --start_agents, from the registry
  std::string nodes;                         // a hosts file, or empty
  std::string include, exclude;              // DeepSpeed's host filters
  int slots = 0;                             // a host's slots where its entry gives none
  // Every backend's own flags by name, checked (LaunchSettings::backend_flags).
  std::map<std::string, std::string> backend_flags;
  std::string agent_binary;  // empty when the backend starts no agent
  std::string log_dir;       // --log_dir, or the head's runtime folder
  std::string endpoint_file;
  absl::Duration heartbeat_interval;
  absl::Duration agent_timeout;

  static absl::StatusOr<HeadOptions> FromFlags(const HeadFlags& flags);
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_OPTIONS_H_
