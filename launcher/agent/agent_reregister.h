// What an agent tells a head that lost sight of it, so that no run and no result is lost:
//   - registering again (after a head restart or an absence), its Register lists the runs it
//     holds (Register.runs, LocalRun::Held) and the newest runs that ended meanwhile, for a
//     restarted head to adopt them (launcher/head/head_recovery.h);
//   - welcomed again after an absence, it sends what happened after that Register was made: the
//     Exits of runs that ended since it lost the head, and each run's Reports still unanswered
//     (the head drops what it already has: an Exit for an ended part; hpo keeps a step's first
//     value).
// Thread-safety: pure functions of the agent's run table (its poll loop's).
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_REREGISTER_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_REREGISTER_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "launcher/agent/local_run.h"
#include "launcher/head/ended_runs.h"

namespace tunefleet {
namespace launcher {

// Adds the held and the recently ended runs to the Register in `envelope`.
void AddRunsToRegister(const std::map<uint64_t, LocalRun>& runs, const EndedRuns& ended,
                       comm::Envelope& envelope);

// The Exits of the runs that ended at or after `lost_at`, then every run's unanswered Reports.
std::vector<comm::Envelope> MissedWhileAway(const std::map<uint64_t, LocalRun>& runs,
                                            const EndedRuns& ended, absl::Time lost_at);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_REREGISTER_H_
