// The runs an agent ended lately, with their Exits, kept for a head that may not have seen
// them: a head that restarted (or lost this agent for a while) learns them from the agent's next
// Register (HeldRun.ended) and from the Exits sent again after its Welcome, so that it neither
// runs them again nor loses their outcome (launcher/head/head.h adopts them).
//
// Bounds: the newest kKeptExits; older than kKeepExitsFor once a head welcomed the agent again.
// Thread-safety: owned by the agent's poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_ENDED_RUNS_H_
#define TUNEFLEET_LAUNCHER_HEAD_ENDED_RUNS_H_

#include <cstddef>
#include <deque>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

inline constexpr size_t kKeptExits = 64;
inline constexpr absl::Duration kKeepExitsFor = absl::Minutes(10);

class EndedRuns {
 public:
  // Remembers a run that ended at `now` (`held` as LocalRun::Held says it; its `ended` and
  // `exit` are set here), then forgets the oldest beyond the bounds; the age bound applies only
  // while `welcomed` (a head is there that got the Exits).
  void Add(comm::HeldRun held, const comm::Exit& exit, absl::Time now, bool welcomed);
  // Adds the newest ended runs to the Register in `envelope` while the frame stays under 3/4
  // of comm::kMaxFrameBytes (the oldest are left out first), oldest first.
  void AddToRegister(comm::Envelope& envelope) const;
  // The Exits of the runs that ended at or after `since` (oldest first).
  std::vector<comm::Exit> ExitsSince(absl::Time since) const;

  size_t size() const { return ended_.size(); }

 private:
  struct Ended {
    comm::HeldRun held;
    absl::Time at;
  };
  std::deque<Ended> ended_;  // newest last
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_ENDED_RUNS_H_
