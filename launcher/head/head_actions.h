// What the head's parts (dispatcher.h, head_recovery.h) ask of the head (head.h): messages go
// out through its ROUTER socket, and runs end, fail or are cancelled the one way the head
// does it. The head implements this; the parts share its PeerTable and RunTable.
// Thread-safety: every call comes from the head's poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_ACTIONS_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_ACTIONS_H_

#include <string>

#include "comm/proto/messages.pb.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

class HeadActions {
 public:
  virtual ~HeadActions() = default;

  // Sends one message to a peer (identity); a failure is logged, never returned.
  virtual void Send(const std::string& identity, const comm::Envelope& envelope) = 0;
  // Places queued runs in FIFO order while the first fits; fails those that never can.
  virtual void Dispatch() = 0;
  // Exit FAILED with `reason` (and `cause`) to the queued run's client, and the run erased.
  virtual void FailQueued(RunRecord& run, const std::string& reason, comm::Exit::Cause cause) = 0;
  // Hashes and serves the run's staged paths (head_staging.h); fails the run (false) when it
  // cannot.
  virtual bool PrepareStaging(RunRecord& run) = 0;
  // Sends Cancel to every agent of the run whose part has not ended, except `except`.
  virtual void CancelRun(RunRecord& run, const std::string& reason,
                         const std::string& except = "") = 0;
  // Sends the client the run's aggregated Exit (once), and erases the run if nothing runs.
  virtual void ReportAndMaybeErase(RunRecord& run) = 0;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_ACTIONS_H_
