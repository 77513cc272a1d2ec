// The Slurm backend (head --start_agents slurm, inside an allocation: salloc, sbatch). Its hosts
// are the allocation's nodes (SLURM_JOB_NODELIST; slurm_allocation.h), each with the
// allocation's GPUs per node as its slots when the environment says; --nodes is refused (pick
// nodes with --include / --exclude), and so is a Unix-socket --bind over several nodes.
// It starts every agent as one job step over all the hosts:
//   exec srun --nodes=N --ntasks=N --ntasks-per-node=1 --overlap --nodelist=H1,H2,...
//        --kill-on-bad-exit=0 --wait=0 --job-name=tunefleet-agents --output=LOG_DIR/%N.log
//        /bin/sh -c 'case $SLURMD_NODENAME in H1) set -- --slots 4;; ... esac;
//                    exec <agent> --head <endpoint> --name "$SLURMD_NODENAME" "$@"'
// without --detach: the agents are the step's tasks, and the step ends when the head stops
// srun (AgentLauncher::Stop(), or the kernel's SIGKILL of srun when the head dies). --overlap
// lets the step share the allocation's CPUs and GPUs with the head's own step. Each node's
// output goes to LOG_DIR/<node>.log (srun's %N), srun's own to LOG_DIR/srun.log. A step that
// ends before a host's agent registered fails that host (no agent is left on any host), with
// the exit and the last line of the host's own log, else of srun's ("Unable to create step").
//
// Thread-safety: immutable (launcher_backend.h).
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_SLURM_BACKEND_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_SLURM_BACKEND_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

class SlurmBackend : public LauncherBackend {
 public:
  // `srun`: the srun binary (a test's fake).
  explicit SlurmBackend(std::string srun = "srun") : srun_(std::move(srun)) {}

  std::string name() const override { return "slurm"; }
  std::string help() const override;
  bool has_hosts() const override { return true; }
  std::string slots_note() const override;
  absl::Status CheckFlags(const BackendFlags& flags) const override;
  absl::StatusOr<BackendHosts> Hosts(const BackendFlags& flags) const override;
  std::vector<LaunchCommand> Plan(const LaunchSettings& settings,
                                  const std::vector<HostEntry>& hosts) const override;
  std::optional<std::string> EndedBeforeRegistering(const LaunchCommand& command,
                                                    const std::string& host,
                                                    const std::string& host_log,
                                                    const CommandEnd& end) const override;

  // The one srun command line that starts every host's agent (for logs and tests).
  std::string Command(const LaunchSettings& settings, const std::vector<HostEntry>& hosts) const;

 private:
  std::string srun_;
};

// The registry's instance (all_backends.cc).
const LauncherBackend& SlurmLauncherBackend();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_SLURM_BACKEND_H_
