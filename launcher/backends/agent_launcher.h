// Starts the agents of the head's hosts through a launcher backend (launcher_backend.h) and
// says, per host and within seconds, whether its agent came up and why not.
//
// The backend plans the launch commands (ssh: one per host; Slurm: one srun job step for all;
// pdsh: one pdsh per set of hosts); this runs each through /bin/sh -c (its output to the
// command's log), follows it from the head's poll loop and, on Stop(), sends SIGTERM to each one
// still running.
//
// Per host, once: "up" when an agent named H registers with the head; "failed" when its launch
// command exits before that and the backend says that is a failure (with the exit and the last
// line of the host's output: ssh's "Permission denied", srun's "Unable to create step", the
// agent's own error), or when the command cannot start at all; "silent" when neither happens
// within the registration timeout (a silent host whose agent registers later becomes up).
// Thread-safety: used from the head's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "common/child_process.h"
#include "launcher/backends/launcher_backend.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

class AgentLauncher {
 public:
  enum class State { kStarting, kUp, kFailed, kSilent };
  struct HostStatus {
    std::string host;  // the agent's name (without user@)
    State state = State::kStarting;
    std::string detail;
  };

  // `backend` must outlive this.
  AgentLauncher(const LauncherBackend& backend, LaunchSettings settings,
                absl::Duration register_timeout, std::vector<HostEntry> hosts);
  ~AgentLauncher();

  // Starts every launch command; a host whose command cannot start is failed at once.
  void Start(absl::Time now);
  // Reaps exited commands and reports each host's change of state once (logged).
  void Poll(absl::Time now, const absl::flat_hash_set<std::string>& registered_agents);
  // SIGTERM to every launch command still running.
  void Stop();

  const std::vector<HostStatus>& status() const { return status_; }
  bool AllSettled() const;

 private:
  void Settle(size_t i, State state, const std::string& detail);

  const LauncherBackend& backend_;
  LaunchSettings settings_;
  absl::Duration register_timeout_;
  std::vector<HostEntry> hosts_;
  std::vector<HostStatus> status_;
  // The backend's launch commands and their processes (null when one could not start); host i
  // is commands_[command_of_[i]].hosts[slot_of_[i]].
  std::vector<LaunchCommand> commands_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
  std::vector<size_t> command_of_;
  std::vector<size_t> slot_of_;
  absl::Time started_;
  bool summary_logged_ = false;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_
