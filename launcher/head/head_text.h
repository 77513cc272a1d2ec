// The few words the head (head.h) and the programs that drive it put in log lines and in the
// reasons they send: spans of time, rank ranges, peer roles and run outcomes. Pure functions.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_TEXT_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_TEXT_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

// "3 s", "150 ms", "2.5 s".
std::string FormatSpan(absl::Duration d);
// "0-3" or "2" ("-" for none).
std::string RankRange(const std::vector<int>& ranks);
// "agent" or "client".
const char* RoleName(comm::Role role);
// "COMPLETED", "STOPPED", "FAILED", "CANCELLED" (comm::Exit::Outcome_Name), and "UNKNOWN" for a
// value this build does not know, where Outcome_Name would give "".
std::string OutcomeName(comm::Exit::Outcome outcome);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_TEXT_H_
