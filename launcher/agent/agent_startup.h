// The agent process after its flags are validated (agent_options.h): its private runtime
// folder (RUNTIME/agent-NAME unless --runtime_dir), --log_dir made, one agent per name and host
// (a lock in the runtime folder: with --detach, finding another agent of this name running is
// success, exit 0), with --detach the move to the background once registered
// (launcher/agent/detach.h), signals, the Agent (agent.h) run until it stops, and the files it
// leaves (its trainers' socket, its lock) removed. Returns the process's exit code
// (common/cli.h); errors are printed as one `agent: error:` line (and told to a waiting
// detach parent).
//
// Thread-safety: call once, from main's thread, before any other thread exists.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_STARTUP_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_STARTUP_H_

#include "launcher/agent/agent_options.h"

namespace tunefleet {
namespace launcher {

int RunAgent(AgentOptions options);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_STARTUP_H_
