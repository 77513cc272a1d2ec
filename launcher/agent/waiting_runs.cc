#include "launcher/agent/waiting_runs.h"

#include <optional>
#include <string>

#include "common/logging.h"

namespace tunefleet {
namespace launcher {

std::vector<std::pair<uint64_t, AgentSlots::Seats>> WaitingRuns::Admit(
    AgentSlots& slots, std::map<uint64_t, LocalRun>& runs) {
  std::vector<std::pair<uint64_t, AgentSlots::Seats>> admitted;
  while (!queue_.empty()) {
    const uint64_t run_id = queue_.front();
    auto it = runs.find(run_id);
    if (it == runs.end() || !it->second.waiting || it->second.cancelled) {
      if (it != runs.end()) it->second.waiting = false;
      queue_.pop_front();
      continue;
    }
    LocalRun& run = it->second;
    std::string why;
    std::optional<AgentSlots::Seats> seats =
        slots.Take(run_id, run.spec, run.staged_assign.ranks_size(), runs, &why);
    if (!seats.has_value()) {
      if (why != run.wait_reason) {
        TF_LOG(INFO) << "run " << run_id << " (trial " << run.spec.trial() << ") waits: " << why;
        run.wait_reason = why;
      }
      break;
    }
    queue_.pop_front();
    run.waiting = false;
    admitted.emplace_back(run_id, *std::move(seats));
  }
  return admitted;
}

}  // namespace launcher
}  // namespace tunefleet
