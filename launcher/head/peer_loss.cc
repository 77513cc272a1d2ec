#include "launcher/head/peer_loss.h"

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "launcher/head/head_text.h"

namespace tunefleet {
namespace launcher {
namespace {

// "REASON; DOING run(s) 1, 2", or REASON alone when there are no runs.
std::string WithRuns(const std::string& reason, const char* doing,
                     const std::vector<uint64_t>& ids) {
  if (ids.empty()) return reason;
  return absl::StrCat(reason, "; ", doing, " run(s) ", absl::StrJoin(ids, ", "));
}

}  // namespace

void FailRunsOfLostAgent(RunTable& runs, HeadActions& head, const std::string& identity,
                         const std::string& name, const std::string& reason) {
  const std::vector<uint64_t> ids = runs.RunsOnAgent(identity);
  TF_LOG(WARNING) << WithRuns(reason, "failing", ids);
  for (uint64_t id : ids) {
    RunRecord& run = *runs.Find(id);
    comm::Exit lost;
    lost.set_run_id(id);
    lost.set_trial(run.spec.trial());
    lost.set_outcome(comm::Exit::FAILED);
    lost.set_rank(run.LivePart(identity)->ranks.front());
    lost.set_reason(reason);
    lost.set_agent(name);
    runs.RecordExit(run, identity, lost);
    if (!run.cancel_sent && !run.AllEnded()) head.CancelRun(run, reason);
    head.ReportAndMaybeErase(run);
  }
}

void KeepRunsOfLostClient(RunTable& runs, const std::string& identity, const std::string& reason,
                          absl::Time now, absl::Duration client_grace) {
  const std::vector<uint64_t> ids = runs.RunsOfClient(identity);
  const absl::Time until = now + client_grace;
  std::vector<uint64_t> kept;
  for (uint64_t id : ids) {
    RunRecord& run = *runs.Find(id);
    if (run.queued) {
      runs.Erase(id);
    } else if (run.reported || run.cancel_sent) {
      runs.DetachClient(run);
      run.reported = true;
    } else {
      runs.Orphan(run, until);
      kept.push_back(id);
    }
  }
  TF_LOG(WARNING) << WithRuns(kept.empty()
                                  ? reason
                                  : absl::StrCat(reason, "; it may register again within ",
                                                 FormatSpan(client_grace), " and claim its runs"),
                              "keeping", kept);
}

}  // namespace launcher
}  // namespace tunefleet
