#include "tests/launcher/head/recording_head_actions.h"

namespace tunefleet {
namespace launcher {

void RecordingHeadActions::Send(const std::string& identity, const comm::Envelope& envelope) {
  sent.emplace_back(identity, envelope);
}

void RecordingHeadActions::FailQueued(RunRecord& run, const std::string& reason,
                                      comm::Exit::Cause cause) {
  failed.push_back({run.run_id, reason, cause});
  runs_.Erase(run.run_id);
}

bool RecordingHeadActions::PrepareStaging(RunRecord& run) {
  staged.push_back(run.run_id);
  return true;
}

void RecordingHeadActions::CancelRun(RunRecord& run, const std::string& reason,
                                     const std::string& except) {
  run.cancel_sent = true;
  cancelled.push_back({run.run_id, reason, except});
}

void RecordingHeadActions::ReportAndMaybeErase(RunRecord& run) {
  if (!run.reported) {
    if (run.adopted && run.client.empty()) return;  // kept for the client that resubmits it
    run.reported = true;
    reported.push_back({run.run_id, run.client, run.Aggregate()});
  }
  if (run.AllEnded()) runs_.Erase(run.run_id);
}

std::vector<comm::Envelope> RecordingHeadActions::SentTo(const std::string& identity) const {
  std::vector<comm::Envelope> out;
  for (const auto& [to, envelope] : sent) {
    if (to == identity) out.push_back(envelope);
  }
  return out;
}

}  // namespace launcher
}  // namespace tunefleet
