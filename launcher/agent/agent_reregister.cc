#include "launcher/agent/agent_reregister.h"

namespace tunefleet {
namespace launcher {

void AddRunsToRegister(const std::map<uint64_t, LocalRun>& runs, const EndedRuns& ended,
                       comm::Envelope& envelope) {
  // The frame stays under the size cap: the oldest ended runs go first.
  comm::Register* r = envelope.mutable_register_();
  for (const auto& [id, run] : runs) *r->add_runs() = run.Held(id);
  ended.AddToRegister(envelope);
}

std::vector<comm::Envelope> MissedWhileAway(const std::map<uint64_t, LocalRun>& runs,
                                            const EndedRuns& ended, absl::Time lost_at) {
  std::vector<comm::Envelope> missed;
  for (const comm::Exit& exit : ended.ExitsSince(lost_at)) {
    comm::Envelope envelope;
    *envelope.mutable_exit() = exit;
    missed.push_back(std::move(envelope));
  }
  for (const auto& [id, run] : runs) {
    for (const comm::Report& r : run.unanswered) {
      comm::Envelope report;
      *report.mutable_report() = r;
      missed.push_back(std::move(report));
    }
  }
  return missed;
}

}  // namespace launcher
}  // namespace tunefleet
