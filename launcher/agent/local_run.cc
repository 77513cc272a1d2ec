#include "launcher/agent/local_run.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/file_util.h"
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
    if (r.running()) {
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
    if (r.running()) r.process->Signal(SIGKILL);
  }
  kill_deadline = absl::InfiniteFuture();
}

bool LocalRun::ChildEnded(uint64_t run_id, pid_t pid, int status, absl::Duration kill_grace) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    LocalRank& r = ranks[i];
    if (!r.running() || r.process->pid() != pid) continue;
    r.process->SetExitStatus(status);
    r.process->DrainStderr();
    RankEnd end;
    end.exit_code = r.process->exit_code();
    end.signal = r.process->term_signal();
    end.description = r.process->DescribeExit();
    if (!r.warm) {
      end.ok = r.process->succeeded();
      end.stderr_tail = r.process->StderrTail();
    } else {
      // A worker never exits inside a trial: whatever its status, the trial did not finish.
      // Its output went to the trial's log (or, before the trial began, to its own).
      end.ok = false;
      if (end.signal == 0) {
        end.description = absl::StrCat("the warm worker ended (", end.description,
                                       ") before the trial did");
      }
      end.stderr_tail = FileTail(r.log_path, ChildProcess::kTailBytes);
      if (end.stderr_tail.empty()) end.stderr_tail = FileTail(r.worker_log, ChildProcess::kTailBytes);
    }
    RankEnded(run_id, i, std::move(end), kill_grace);
    return true;
  }
  return false;
}

void LocalRun::RankEnded(uint64_t run_id, size_t i, RankEnd end, absl::Duration kill_grace) {
  LocalRank& r = ranks[i];
  r.end = std::move(end);
  if (!r.end->ok && failed_index < 0 && !cancelled) {
    failed_index = static_cast<int>(i);
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial() << ") rank " << r.rank
                    << (r.warm ? " (warm)" : "") << ": " << r.end->description;
    Stop("another rank failed", /*cancel=*/false, kill_grace);
  }
}

bool LocalRun::Ended() const {
  if (staging.valid()) return false;  // a fetch still going holds the run
  if (waiting && !cancelled) return false;
  for (const LocalRank& r : ranks) {
    if (r.running()) return false;
  }
  return true;
}

LocalRank* LocalRun::DecisionTarget() {
  LocalRank* target = nullptr;
  for (LocalRank& r : ranks) {
    if (target == nullptr || r.rank < target->rank) target = &r;
  }
  if (target == nullptr || !target->running()) return nullptr;
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
    if (start_refused) e.set_cause(comm::Exit::TRIAL_INPUT);
    if (!ranks.empty()) e.set_rank(ranks.back().rank);
  } else if (failed_index >= 0) {
    const LocalRank& r = ranks[static_cast<size_t>(failed_index)];
    const RankEnd& end = *r.end;
    e.set_outcome(comm::Exit::FAILED);
    e.set_rank(r.rank);
    e.set_exit_code(end.exit_code);
    e.set_signal(end.signal);
    e.set_stderr_tail(end.stderr_tail);
    if (end.signal == 0 && end.exit_code == kExitUsage) e.set_cause(comm::Exit::TRIAL_INPUT);
    if (end.signal == 0 && end.exit_code == kExitOutOfMemory) {
      e.set_cause(comm::Exit::OUT_OF_MEMORY);
    }
    e.set_reason(end.signal == 0 && end.exit_code == kExitOutOfMemory
                     ? absl::StrCat("out of memory (rank ", r.rank, ")")
                     : absl::StrCat("rank ", r.rank, ": ", end.description));
  } else if (stop_requested) {
    e.set_outcome(comm::Exit::STOPPED);
  } else {
    e.set_outcome(comm::Exit::COMPLETED);
  }
  return e;
}

}  // namespace launcher
}  // namespace tunefleet
