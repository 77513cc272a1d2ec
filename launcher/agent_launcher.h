// Starts the agent of every hosts-file entry through a remote-shell template and says, per host
// and within seconds, whether its agent came up and why not.
//
// For host H (hosts file: `[user@]H [slots=N]`) it runs, through /bin/sh -c,
//   exec <remote_shell with {host} -> [user@]H> <agent> --head <endpoint> --name H --detach [--slots N]
// e.g. `ssh -o BatchMode=yes gpu1 /opt/tunefleet/agent --head tcp://head:5555 --name gpu1`, or in
// tests `ip netns exec h1 ...`. The agent binary path is the same on every host (a shared
// install) unless --agent says otherwise. The remote shell's output goes to LOG_DIR/H.log.
// Per host, once: "up" when an agent named H registers with the head; "failed" when the remote
// shell exits before that (its exit code and the last line of its output: ssh's "Permission
// denied", "Could not resolve hostname", the agent's own error); "silent" when neither happens
// within the registration timeout. With --detach the agent leaves the remote shell once it has
// registered, in its own session, so that it outlives the head (a restarted head finds it
// registering again; starting it again is harmless: an agent of that name already running on
// the host makes the new one exit 0). Stop() ends the remote shells still running.
// Thread-safety: used from the head's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_AGENT_LAUNCHER_H_
#define TUNEFLEET_LAUNCHER_AGENT_LAUNCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "launcher/child_process.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

class AgentLauncher {
 public:
  struct Options {
    std::string remote_shell = "ssh -o BatchMode=yes {host}";
    std::string agent_binary;   // absolute path, the same on every host
    std::string head_endpoint;  // what agents connect to
    std::string log_dir = "/tmp/tunefleet-head";
    absl::Duration register_timeout = absl::Seconds(30);
    std::string keys_dir;  // passed on as --keys (the same path on every host)
  };

  enum class State { kStarting, kUp, kFailed, kSilent };
  struct HostStatus {
    std::string host;  // the agent's name (without user@)
    State state = State::kStarting;
    std::string detail;
  };

  AgentLauncher(Options options, std::vector<HostEntry> hosts);
  ~AgentLauncher();

  // The command line for one host (for logs and tests).
  std::string CommandFor(const HostEntry& host) const;
  // Starts every remote shell; a host whose shell cannot start is failed at once.
  void Start(absl::Time now);
  // Reaps exited shells and reports each host's change of state once (logged).
  void Poll(absl::Time now, const absl::flat_hash_set<std::string>& registered_agents);
  // SIGTERM to every remote shell still running.
  void Stop();

  const std::vector<HostStatus>& status() const { return status_; }
  bool AllSettled() const;

 private:
  void Settle(size_t i, State state, const std::string& detail);

  Options options_;
  std::vector<HostEntry> hosts_;
  std::vector<HostStatus> status_;
  std::vector<std::unique_ptr<ChildProcess>> shells_;
  absl::Time started_;
  bool summary_logged_ = false;
};

// "user@host" -> "host".
std::string AgentNameOf(const std::string& host);
// `word` quoted for /bin/sh when it needs it.
std::string ShellQuote(const std::string& word);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_LAUNCHER_H_
