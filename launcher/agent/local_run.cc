#include "launcher/agent/local_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
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
        end.description =
            absl::StrCat("the warm worker ended (", end.description, ") before the trial did");
      }
      end.stderr_tail = FileTail(r.log_path, ChildProcess::kTailBytes);
      if (end.stderr_tail.empty())
        end.stderr_tail = FileTail(r.worker_log, ChildProcess::kTailBytes);
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

std::unique_ptr<ChildProcess> LocalRun::WarmTrialDone(const comm::TrialDone& done, int lane,
                                                      absl::Duration kill_grace, bool* retiring) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    LocalRank& r = ranks[i];
    if (!r.warm || r.lane != lane || !r.running()) continue;
    RankEnd end;
    end.ok = done.exit_code() == 0;
    end.exit_code = done.exit_code();
    end.stderr_tail = done.stderr_tail();
    end.description = absl::StrCat("exit code ", done.exit_code());
    // A run being stopped signalled the worker: even if it survived, it is not reused.
    const bool stopped = cancelled || failed_index >= 0 || !start_error.empty();
    *retiring = done.retiring() || stopped;
    std::unique_ptr<ChildProcess> worker = std::move(r.process);
    RankEnded(done.run_id(), i, std::move(end), kill_grace);
    return worker;
  }
  return nullptr;
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
                                    return r.step() == d.step() ||
                                           d.action() == comm::Decision::STOP;
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
    // tunefleet's trainer says what went wrong by its exit code; a program, in its stderr.
    const bool oom = program() ? SaysOutOfMemory(end.stderr_tail)
                               : end.signal == 0 && end.exit_code == kExitOutOfMemory;
    if (!program() && end.signal == 0 && end.exit_code == kExitUsage) {
      e.set_cause(comm::Exit::TRIAL_INPUT);
    }
    if (oom) e.set_cause(comm::Exit::OUT_OF_MEMORY);
    e.set_reason(oom ? absl::StrCat("out of memory (rank ", r.rank, ")")
                     : absl::StrCat("rank ", r.rank, ": ", end.description));
  } else if (stop_requested) {
    e.set_outcome(comm::Exit::STOPPED);
  } else {
    e.set_outcome(comm::Exit::COMPLETED);
  }
  return e;
}

absl::Duration LocalRun::Grace(absl::Duration agent_grace) const {
  if (program() && spec.program().kill_grace_ms() > 0) {
    return absl::Milliseconds(spec.program().kill_grace_ms());
  }
  return agent_grace;
}

std::vector<comm::Envelope> LocalRun::TakeReports(uint64_t run_id, bool at_end) {
  std::vector<comm::Envelope> out;
  if (reports == nullptr) return out;
  MetricsFollower::Lines lines = reports->Poll(at_end);
  const auto event_error = [&](const absl::Status& s) {
    if (s.ok()) return;
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial()
                    << "): no more TensorBoard events: " << s.message();
    events.reset();
  };
  for (comm::Report& r : lines.reports) {
    r.set_run_id(run_id);
    r.set_trial(spec.trial());
    KeepReport(r);
    if (events != nullptr) event_error(events->Add(r));
    *out.emplace_back().mutable_report() = std::move(r);
  }
  if (at_end && events != nullptr) {
    event_error(events->End(MakeExit(run_id, "").outcome() == comm::Exit::COMPLETED));
    events.reset();
  }
  for (const std::string& warning : lines.warnings) {
    TF_LOG(WARNING) << "run " << run_id << " (trial " << spec.trial() << "): " << warning;
    comm::Report* r = out.emplace_back().mutable_report();
    r->set_run_id(run_id);
    r->set_trial(spec.trial());
    r->set_warning(warning);
  }
  return out;
}

bool LentWorkerExitedCleanly(const std::map<uint64_t, LocalRun>& runs, pid_t pid, int status) {
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  for (const auto& [id, run] : runs) {
    for (const LocalRank& r : run.ranks) {
      if (r.warm && r.running() && r.process->pid() == pid) return true;
    }
  }
  return false;
}

bool SaysOutOfMemory(const std::string& tail) {
  for (const char* sign : {"CUDA out of memory", "OutOfMemoryError", "cudaErrorMemoryAllocation"}) {
    if (tail.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace launcher
}  // namespace tunefleet
