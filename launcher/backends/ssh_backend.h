// The ssh backend (head --start_agents ssh, the default): for host H (`[user@]H [slots=N]`) it
// runs, through /bin/sh -c,
//   exec <remote_shell with {host} -> [user@]H> <agent> --head <endpoint> --name H --detach
//        [--slots N] [--gpu_ids ...|--exclude_gpu_ids ...] [--keys DIR]
// e.g. `ssh -o BatchMode=yes gpu1 /opt/tunefleet/agent --head tcp://head:5555 --name gpu1`, or
// in tests `ip netns exec h1 ...`. The agent binary path is the same on every host (a shared
// install) unless --agent says otherwise. The remote shell's output goes to LOG_DIR/H.log.
// With --detach the agent leaves the remote shell once it has registered, in its own session,
// so that it outlives the head (a restarted head finds it registering again; starting it again
// is harmless: an agent of that name already running on the host makes the new one exit 0).
// A remote shell that ends with a non-zero exit before its agent registered fails its host,
// with the exit and the last line of its output ("Permission denied", the agent's own error);
// one that exits 0 does not (the host's agent was running already and registers by itself).
// Its flag: --remote_shell TEMPLATE (default `ssh -o BatchMode=yes {host}`; must contain
// {host}), declared here (flags()) and read from LaunchSettings::backend_flags.
//
// Thread-safety: immutable (launcher_backend.h).
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_SSH_BACKEND_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_SSH_BACKEND_H_

#include <optional>
#include <string>
#include <vector>

#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

class SshBackend : public LauncherBackend {
 public:
  std::string name() const override { return "ssh"; }
  std::string help() const override;
  std::vector<BackendFlag> flags() const override;
  std::vector<LaunchCommand> Plan(const LaunchSettings& settings,
                                  const std::vector<HostEntry>& hosts) const override;
  std::optional<std::string> EndedBeforeRegistering(const LaunchCommand& command,
                                                    const std::string& host,
                                                    const std::string& host_log,
                                                    const CommandEnd& end) const override;

  // The command line for one host (for logs and tests).
  static std::string CommandFor(const LaunchSettings& settings, const HostEntry& host);
  // --remote_shell as `settings` give it (its default when absent).
  static std::string RemoteShell(const LaunchSettings& settings);
};

// The registry's instance (all_backends.cc).
const LauncherBackend& SshLauncherBackend();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_SSH_BACKEND_H_
