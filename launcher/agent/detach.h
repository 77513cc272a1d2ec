// Running a daemon the head starts over a remote shell, so that it outlives the shell and the
// head (a head restart must not take the node's runs with it):
//   - LockInstance: one agent per name and host. An flock on LOCK_PATH held for the process's
//     life; the file holds its pid. Held by a live process -> AlreadyExists naming that pid.
//   - Detach: fork; the child starts a new session (no controlling terminal, out of the
//     shell's process group), its stdin is /dev/null, stdout and stderr append to LOG_PATH; the
//     parent waits until the child says it is ready (ReportReady) or failed (ReportFailure),
//     or exits, and returns the exit code for the parent's main with a one-line message.
// Thread-safety: call Detach before any thread starts (ZeroMQ's included).
#ifndef TUNEFLEET_LAUNCHER_AGENT_DETACH_H_
#define TUNEFLEET_LAUNCHER_AGENT_DETACH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace launcher {

// The lock's file descriptor (kept open, and inherited by Detach's child).
absl::StatusOr<int> LockInstance(const std::string& lock_path);
// Writes this process's pid into the lock file (after Detach, in the child).
void RecordLockOwner(int lock_fd);

struct Detached {
  bool parent = false;  // true: return exit_code from main now
  int exit_code = 0;
  int ready_fd = -1;  // child: where ReportReady / ReportFailure write
};
// `what` names the daemon in the parent's message ("agent gpu1").
absl::StatusOr<Detached> Detach(const std::string& log_path, const std::string& what);
void ReportReady(int* ready_fd);
void ReportFailure(int* ready_fd, const std::string& message);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_DETACH_H_
