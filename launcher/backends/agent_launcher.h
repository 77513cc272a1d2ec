// Starts the agents of the head's hosts and says, per host and within seconds, whether its
// agent came up and why not. Two ways:
//
// Remote shell (head --start_agents ssh): for host H (`[user@]H [slots=N]`) it runs, through
// /bin/sh -c,
//   exec <remote_shell with {host} -> [user@]H> <agent> --head <endpoint> --name H --detach
//        [--slots N] [--gpu_ids ...|--exclude_gpu_ids ...] [--keys DIR]
// e.g. `ssh -o BatchMode=yes gpu1 /opt/tunefleet/agent --head tcp://head:5555 --name gpu1`, or in
// tests `ip netns exec h1 ...`. The agent binary path is the same on every host (a shared
// install) unless --agent says otherwise. The remote shell's output goes to LOG_DIR/H.log.
// With --detach the agent leaves the remote shell once it has registered, in its own session,
// so that it outlives the head (a restarted head finds it registering again; starting it again
// is harmless: an agent of that name already running on the host makes the new one exit 0).
//
// Slurm (head --start_agents slurm, inside an allocation): one job step over all the hosts,
//   exec srun --nodes=N --ntasks=N --ntasks-per-node=1 --overlap --nodelist=H1,H2,...
//        --kill-on-bad-exit=0 --wait=0 --job-name=tunefleet-agents --output=LOG_DIR/%N.log
//        /bin/sh -c 'case $SLURMD_NODENAME in H1) set -- --slots 4;; ... esac;
//                    exec <agent> --head <endpoint> --name "$SLURMD_NODENAME" "$@"'
// without --detach: the agents are the step's tasks, and the step ends when the head stops
// srun (Stop(), or the kernel's SIGKILL of srun when the head dies). --overlap lets the step
// share the allocation's CPUs and GPUs with the head's own step. Each node's output goes to
// LOG_DIR/<node>.log (srun's %N), srun's own to LOG_DIR/srun.log.
//
// Per host, once: "up" when an agent named H registers with the head; "failed" when its
// launch command (the remote shell, or srun) exits before that: its exit code and the last line
// of the host's own log (Slurm) or of the command's output (ssh's "Permission denied", srun's
// "Unable to create step", the agent's own error); "silent" when neither happens within the
// registration timeout. Stop() ends the launch commands still running.
// Thread-safety: used from the head's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/child_process.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

class AgentLauncher {
 public:
  enum class Method { kRemoteShell, kSlurm };
  struct Options {
    Method method = Method::kRemoteShell;
    std::string remote_shell = "ssh -o BatchMode=yes {host}";
    std::string srun = "srun";  // the srun binary (kSlurm)
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

  // The command line for one host through the remote shell (for logs and tests).
  std::string CommandFor(const HostEntry& host) const;
  // The one srun command line that starts every host's agent (for logs and tests).
  std::string SlurmCommand() const;
  // Starts every launch command; a host whose command cannot start is failed at once.
  void Start(absl::Time now);
  // Reaps exited shells and reports each host's change of state once (logged).
  void Poll(absl::Time now, const absl::flat_hash_set<std::string>& registered_agents);
  // SIGTERM to every launch command still running.
  void Stop();

  const std::vector<HostStatus>& status() const { return status_; }
  bool AllSettled() const;

 private:
  void Settle(size_t i, State state, const std::string& detail);
  // The agent's arguments that differ per host: --slots, --gpu_ids, --exclude_gpu_ids.
  static std::string HostArgs(const HostEntry& host);
  // Where host i's own output goes.
  std::string HostLog(size_t i) const;

  Options options_;
  std::vector<HostEntry> hosts_;
  std::vector<HostStatus> status_;
  // The launch commands: one per host (remote shell) or one for all (Slurm); host i's is
  // shells_[shell_of_[i]] (null when it could not start).
  std::vector<std::unique_ptr<ChildProcess>> shells_;
  std::vector<size_t> shell_of_;
  absl::Time started_;
  bool summary_logged_ = false;
};

// `word` quoted for /bin/sh when it needs it.
std::string ShellQuote(const std::string& word);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_AGENT_LAUNCHER_H_
