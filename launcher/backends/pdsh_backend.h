// The pdsh backend (head --start_agents pdsh): starts the agents of the hosts of --nodes as
// DeepSpeed's PDSH runner starts its workers, with Debian's pdsh:
//   PDSH_RCMD_TYPE=ssh exec pdsh -S -f 1024 -w [user@]H1,[user@]H2,...
//        <agent> --head <endpoint> --name %h --detach [--slots N] [--gpu_ids ...] [--keys DIR]
// pdsh puts each host's name for %h, runs the command on all of them at once (fan-out 1024)
// and exits with the largest of their exit codes (-S). Hosts whose agent arguments differ
// (slots=N, GPU filters) get one pdsh each; usually every host shares one. PDSH_RCMD_TYPE is the
// head's own when its environment sets one (`exec` runs the command on this host: the
// integration test's way), else ssh as DeepSpeed's. pdsh's output, each line prefixed `H: `,
// goes to LOG_DIR/pdsh.log (LOG_DIR/pdsh-K.log for the K-th pdsh after the first).
// As with ssh, --detach lets each agent leave its remote command once registered, so pdsh
// exits 0 and the agents outlive the head. When pdsh exits non-zero before host H's agent
// registered, H failed if pdsh says its command failed (`pdsh@HEAD: H: ... exited with exit
// code N`) or names no host at all (pdsh itself could not run), with the last line H wrote
// (else pdsh's own last line).
//
// Thread-safety: immutable (launcher_backend.h).
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_PDSH_BACKEND_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_PDSH_BACKEND_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

class PdshBackend : public LauncherBackend {
 public:
  // `pdsh`: the pdsh binary; `rcmd`: its PDSH_RCMD_TYPE (empty: the environment's, else ssh).
  explicit PdshBackend(std::string pdsh = "pdsh", std::string rcmd = "")
      : pdsh_(std::move(pdsh)), rcmd_(std::move(rcmd)) {}

  std::string name() const override { return "pdsh"; }
  std::string help() const override;
  std::vector<LaunchCommand> Plan(const LaunchSettings& settings,
                                  const std::vector<HostEntry>& hosts) const override;
  std::optional<std::string> EndedBeforeRegistering(const LaunchCommand& command,
                                                    const std::string& host,
                                                    const std::string& host_log,
                                                    const CommandEnd& end) const override;

  // The pdsh command line that starts the agents of `hosts`, which share their AgentHostArgs.
  std::string Command(const LaunchSettings& settings, const std::vector<HostEntry>& hosts) const;

 private:
  std::string pdsh_;
  std::string rcmd_;
};

// The registry's instance (all_backends.cc).
const LauncherBackend& PdshLauncherBackend();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_PDSH_BACKEND_H_
