// The agent's runs that were assigned but wait for their slots: a GPU of their own still held by
// another run, or a shared GPU whose memory does not fit them yet (agent_slots.h). They start in
// assignment order, and one that cannot start holds back those after it, so that a run needing a
// GPU of its own is not passed forever by runs that share.
//
//   waiting.Add(run_id);                                   // run.waiting set, staged_assign kept
//   for (auto& [id, seats] : waiting.Admit(*slots, runs)) start(id, seats);
// Thread-safety: the agent's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_AGENT_WAITING_RUNS_H_
#define TUNEFLEET_LAUNCHER_AGENT_WAITING_RUNS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "launcher/agent/agent_slots.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {

class WaitingRuns {
 public:
  void Add(uint64_t run_id) { queue_.push_back(run_id); }
  // The runs that may start now, in order, their slots taken (run.waiting cleared); drops runs
  // that ended or were cancelled meanwhile. Logs a run's reason to wait when it changes.
  std::vector<std::pair<uint64_t, AgentSlots::Seats>> Admit(AgentSlots& slots,
                                                            std::map<uint64_t, LocalRun>& runs);

 private:
  std::deque<uint64_t> queue_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_WAITING_RUNS_H_
