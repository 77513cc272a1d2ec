// What the head does with the runs of a peer it lost (silent for comm::kDefaultLiveness
// heartbeat intervals, or replaced by a new registration), each logged in one WARNING line:
//   - an agent: every run with ranks on it fails there (a synthetic Exit FAILED with the
//     reason, for the part's first rank), its other agents get a Cancel, and a run whose parts
//     all ended is reported to its client ("REASON; failing run(s) 3, 4");
//   - a client: its queued runs are dropped (it submits them again when it registers again),
//     its runs already reported or being cancelled lose their client, and the others are kept
//     as orphans for `client_grace`, for the client to claim by submitting them again
//     (launcher/head/head_recovery.h; "REASON; it may register again within 30s and claim its
//     runs; keeping run(s) 5").
// The head has already erased the peer from its PeerTable; it dispatches afterwards.
// Thread-safety: the head's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_HEAD_PEER_LOSS_H_
#define TUNEFLEET_LAUNCHER_HEAD_PEER_LOSS_H_

#include <string>

#include "absl/time/time.h"
#include "launcher/head/head_actions.h"
#include "launcher/head/run_table.h"

namespace tunefleet {
namespace launcher {

// Agent `identity`, registered as `name`, is lost for `reason`.
void FailRunsOfLostAgent(RunTable& runs, HeadActions& head, const std::string& identity,
                         const std::string& name, const std::string& reason);

// Client `identity` is lost for `reason`; its placed runs wait `client_grace` from `now`.
void KeepRunsOfLostClient(RunTable& runs, const std::string& identity, const std::string& reason,
                          absl::Time now, absl::Duration client_grace);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_PEER_LOSS_H_
