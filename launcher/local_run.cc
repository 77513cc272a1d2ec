#include "launcher/local_run.h"

#include <signal.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {

void LocalRun::Stop(const std::string& reason, bool cancel, absl::Duration kill_grace) {
  if (cancel && !cancelled) {
    cancelled = true;
    cancel_reason = reason;
  }
  bool signalled = false;
  for (LocalRank& r : ranks) {
    if (r.process != nullptr && !r.process->exited()) {
      r.process->Signal(SIGTERM);
      signalled = true;
    }
  }
  if (signalled && kill_deadline == absl::InfiniteFuture()) {
    kill_deadline = absl::Now() + kill_grace;
  }
}

void LocalRun::KillOverdue(absl::Time now) {
  if (now < kill_deadline) return;
  for (LocalRank& r : ranks) {
    if (r.process != nullptr && !r.process->exited()) r.process->Signal(SIGKILL);
  }
  kill_deadline = absl::InfiniteFuture();
}

bool LocalRun::ChildEnded(uint64_t run_id, pid_t pid, int status, absl::Duration kill_grace) {
  bool ours = false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    LocalRank& r = ranks[i];
    if (r.process == nullptr || r.process->pid() != pid) continue;
    ours = true;
    r.process->SetExitStatus(status);
    r.process->DrainStderr();
    if (!r.process->succeeded() && failed_index < 0 && !cancelled) {
      failed_index = static_cast<int>(i);
      TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial() << ") rank " << r.rank
                      << ": " << r.process->DescribeExit();
      Stop("another rank failed", /*cancel=*/false, kill_grace);
    }
  }
  return ours;
}

bool LocalRun::Ended() const {
  if (staging.valid()) return false;  // a fetch still going holds the run
  for (const LocalRank& r : ranks) {
    if (r.process != nullptr && !r.process->exited()) return false;
  }
  return true;
}

LocalRank* LocalRun::DecisionTarget() {
  LocalRank* target = nullptr;
  for (LocalRank& r : ranks) {
    if (target == nullptr || r.rank < target->rank) target = &r;
  }
  if (target == nullptr || target->process == nullptr || target->process->exited()) return nullptr;
  return target;
}

void LocalRun::KeepReport(const comm::Report& report) {
  unanswered.push_back(report);
  if (unanswered.size() > kKeptReports) unanswered.pop_front();
}

void LocalRun::Answered(const comm::Decision& d) {
  unanswered.erase(std::remove_if(unanswered.begin(), unanswered.end(),
                                  [&d](const comm::Report& r) {
                                    return r.step() == d.step() || d.action() == comm::Decision::STOP;
                                  }),
                   unanswered.end());
}

comm::HeldRun LocalRun::Held(uint64_t run_id) const {
  comm::HeldRun held;
  *held.mutable_trial() = spec;
  held.mutable_trial()->set_run_id(run_id);
  for (int r : rank_ids) held.add_ranks(r);
  held.set_master_addr(master_addr);
  held.set_master_port(master_port);
  for (const comm::Report& r : unanswered) *held.add_pending_reports() = r;
  return held;
}

comm::Exit LocalRun::MakeExit(uint64_t run_id, const std::string& agent) const {
  comm::Exit e;
  e.set_run_id(run_id);
  e.set_trial(spec.trial());
  e.set_agent(agent);
  if (cancelled) {
    e.set_outcome(comm::Exit::CANCELLED);
    e.set_reason(cancel_reason);
  } else if (!start_error.empty()) {
    e.set_outcome(comm::Exit::FAILED);
    e.set_reason(start_error);
    e.set_exit_code(127);
    if (!ranks.empty()) e.set_rank(ranks.back().rank);
  } else if (failed_index >= 0) {
    const LocalRank& r = ranks[static_cast<size_t>(failed_index)];
    e.set_outcome(comm::Exit::FAILED);
    e.set_rank(r.rank);
    e.set_exit_code(r.process->exit_code());
    e.set_signal(r.process->term_signal());
    e.set_stderr_tail(r.process->StderrTail());
    e.set_reason(r.process->term_signal() == 0 && r.process->exit_code() == kExitOutOfMemory
                     ? absl::StrCat("out of memory (rank ", r.rank, ")")
                     : absl::StrCat("rank ", r.rank, ": ", r.process->DescribeExit()));
  } else if (stop_requested) {
    e.set_outcome(comm::Exit::STOPPED);
  } else {
    e.set_outcome(comm::Exit::COMPLETED);
  }
  return e;
}

}  // namespace launcher
}  // namespace tunefleet
