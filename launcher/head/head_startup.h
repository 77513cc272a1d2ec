// The head process after its flags are validated (head_options.h): --gen_keys' key folder, or
// the hosts (head_hosts.h), the Head bound and its endpoint written to --endpoint_file, the
// agents started through the --start_agents backend (launcher/backends/agent_launcher.h) and
// followed from the head's poll loop (or, for a backend that starts none, the command each
// host's agent needs logged), the poll loop run until a shutdown, the launch commands stopped
// and an ipc:// socket file removed. Returns the process's exit code (common/cli.h): 2 for bad
// input (a hosts file, a filter, the backend's hosts, a --bind that cannot bind), 1 when the
// work failed; errors are printed as one `head: error:` line.
//
// Thread-safety: call once, from main's thread.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_STARTUP_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_STARTUP_H_

#include <string>

#include "common/signals.h"
#include "launcher/head/head_options.h"

namespace tunefleet {
namespace launcher {

// `signals`: SIGINT and SIGTERM, blocked before any thread started.
int RunHead(const HeadOptions& options, SignalFd* signals);

// The endpoint agents on other hosts would use: a wildcard address becomes this host's name.
std::string EndpointForAgents(const std::string& endpoint);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_STARTUP_H_
