#include "launcher/head/head_recovery.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "launcher/head/head_text.h"

namespace tunefleet {
namespace launcher {

void HeadRecovery::AdoptHeldRuns(const std::string& identity, const comm::Register& reg) {
  const std::string& name = reg.name();
  const absl::Time now = absl::Now();
  for (const comm::HeldRun& held : reg.runs()) {
    const uint64_t run_id = held.trial().run_id();
    if (!reg.previous_session().empty() && reg.previous_session() == session_) {
      // This head knew the agent before: runs it no longer has there were failed when the
      // agent was declared lost.
      RunRecord* run = runs_.Find(run_id);
      if (held.ended() || (run != nullptr && run->LivePart(identity) != nullptr)) continue;
      comm::Envelope envelope;
      envelope.mutable_cancel()->set_run_id(run_id);
      envelope.mutable_cancel()->set_trial(held.trial().trial());
      envelope.mutable_cancel()->set_reason("the head failed this run when it lost the agent");
      head_.Send(identity, envelope);
      continue;
    }
    RunRecord* run = runs_.Adopt(held, identity, name, std::max(now, deadline_) + orphan_grace_,
                                 reg.gpus_size() > 0);
    if (run == nullptr) continue;  // this part is known already
    TF_LOG(INFO) << "adopted run " << run_id << " (trial " << held.trial().trial()
                 << (held.trial().sweep().empty() ? "" : " of ") << held.trial().sweep()
                 << ", rank(s) " << RankRange({held.ranks().begin(), held.ranks().end()}) << " of "
                 << held.trial().world_size() << ") from agent " << name << ": "
                 << (held.ended() ? absl::StrCat("ended ", OutcomeName(held.exit().outcome()))
                                  : std::string("running"));
    for (const comm::Report& pending : held.pending_reports()) {
      comm::Envelope report;
      *report.mutable_report() = pending;
      if (run->client.empty()) {
        run->held.push_back(std::move(report));
      } else if (!run->reported) {
        head_.Send(run->client, report);
      }
    }
    if (held.ended()) {
      runs_.RecordExit(*run, identity, held.exit());
      if (held.exit().outcome() == comm::Exit::FAILED && !run->AllEnded() && !run->cancel_sent) {
        head_.CancelRun(*run,
                        absl::StrCat("rank ", held.exit().rank(), " on agent ", name, " failed"),
                        identity);
      }
      if (run->AllEnded()) head_.ReportAndMaybeErase(*run);
    }
  }
}

bool HeadRecovery::Resubmit(const std::string& identity, comm::TrialSpec* trial) {
  const std::string client_name = trial->client();
  if (GiveBackOrphan(identity, client_name, trial->trial())) return true;
  if (const RunRecord* live = runs_.FindForClient(identity, 0, trial->trial());
      live != nullptr && !live->reported) {
    return true;  // this head never lost it
  }
  if (recovering_) {
    TF_LOG(INFO) << "trial " << trial->trial() << " of client " << client_name
                 << " submitted again: waiting for the agents that may hold it";
    held_resubmits_.push_back({identity, std::move(*trial)});
    return true;
  }
  TF_LOG(INFO) << "trial " << trial->trial() << " of client " << client_name
               << " submitted again and no agent holds it: running it again";
  return false;
}

void HeadRecovery::Tick(absl::Time now) {
  if (recovering_ && (now >= deadline_ || (peers_.has_hosts() && peers_.MissingHosts().empty()))) {
    EndRecovery();
  }
  ExpireOrphans(now);
}

bool HeadRecovery::GiveBackOrphan(const std::string& identity, const std::string& client_name,
                                  int64_t trial) {
  RunRecord* orphan = runs_.FindOrphan(client_name, trial);
  if (orphan == nullptr) return false;
  runs_.AttachClient(*orphan, identity);
  TF_LOG(INFO) << "trial " << trial << " of client " << client_name << " found again: run "
               << orphan->run_id << ", held by its agents";
  DeliverHeld(*orphan);
  return true;
}

void HeadRecovery::DeliverHeld(RunRecord& run) {
  std::vector<comm::Envelope> held;
  held.swap(run.held);
  for (const comm::Envelope& envelope : held) head_.Send(run.client, envelope);
  if (run.AllEnded()) head_.ReportAndMaybeErase(run);
}

void HeadRecovery::EndRecovery() {
  recovering_ = false;
  std::vector<Resubmission> held;
  held.swap(held_resubmits_);
  for (Resubmission& r : held) {
    const Peer* client = peers_.Find(r.client);
    if (client == nullptr) continue;  // it left meanwhile
    if (GiveBackOrphan(r.client, client->name, r.spec.trial())) continue;
    RunRecord& run = runs_.Submit(std::move(r.spec), r.client);
    TF_LOG(INFO) << "trial " << run.spec.trial() << " of client " << client->name
                 << ": no agent holds it; run " << run.run_id << " runs it again";
    head_.PrepareStaging(run);
  }
  head_.Dispatch();
}

void HeadRecovery::ExpireOrphans(absl::Time now) {
  for (uint64_t id : runs_.OrphansExpired(now)) {
    RunRecord& run = *runs_.Find(id);
    const std::string reason =
        run.client_lost
            ? absl::StrCat("client ", run.spec.client(), " did not register again within ",
                           FormatSpan(client_grace_), " of its loss")
            : absl::StrCat("no client claimed it within ", FormatSpan(orphan_grace_),
                           " of the head's restart");
    TF_LOG(WARNING) << "run " << id << " (trial " << run.spec.trial() << " of client "
                    << run.spec.client() << "): " << reason;
    runs_.ForgetOrphan(run);
    run.reported = true;
    if (run.AllEnded()) {
      runs_.Erase(id);
    } else if (!run.cancel_sent) {
      head_.CancelRun(run, reason);
    }
  }
}

}  // namespace launcher
}  // namespace tunefleet
