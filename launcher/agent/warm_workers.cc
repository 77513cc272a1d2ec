#include "launcher/agent/warm_workers.h"

#include <signal.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

// "3" for slot 3's own lane, "0.2" for seat 2 of slot 0's shared GPU (lane = slot + slots * (K-1)).
std::string LaneName(int lane, int slots) {
  if (slots < 1 || lane < slots) return std::to_string(lane);
  return absl::StrCat(lane % slots, ".", lane / slots + 1);
}

}  // namespace

WarmWorkers::WarmWorkers(Config config, SendFn send)
    : config_(std::move(config)), send_(std::move(send)) {}

WarmWorkers::~WarmWorkers() = default;

bool WarmWorkers::Eligible(const comm::Assign& assign) {
  const comm::TrialSpec& spec = assign.trial();
  return spec.reuse_worker() && !spec.has_program() && spec.argv_size() > 0 &&
         spec.argv(0) == "train";
}

std::string WarmWorkers::Key(const comm::TrialSpec& spec,
                             const std::map<std::string, std::string>& trial_env) {
  std::string config;
  for (int i = 0; i < spec.argv_size(); ++i) {
    const std::string& arg = spec.argv(i);
    if (arg == "--config" && i + 1 < spec.argv_size()) {
      config = spec.argv(i + 1);
      break;
    }
    if (arg.rfind("--config=", 0) == 0) {
      config = arg.substr(9);
      break;
    }
  }
  // NUL never occurs in argv or environment strings: the parts cannot run into each other.
  std::string key = absl::StrCat(spec.sweep(), std::string(1, '\0'), config);
  for (const auto& [k, v] : trial_env) absl::StrAppend(&key, std::string(1, '\0'), k, "=", v);
  return key;
}

void WarmWorkers::SendRunTrial(int slot, Worker& w) {
  if (!w.queued.has_value() || w.identity.empty()) return;
  absl::Status sent = send_(w.identity, *w.queued);
  if (!sent.ok()) {
    // Its DEALER is gone: the worker is dying, and its death (reaped) fails the trial.
    TF_LOG(WARNING) << "cannot hand run " << w.run_id << " to the warm worker of slot " << slot
                    << " (pid " << w.pid << "): " << sent.message();
  }
  w.queued.reset();
}

void WarmWorkers::Retire(int slot, absl::Time now, bool signal) {
  auto it = slots_.find(slot);
  if (it == slots_.end()) return;
  Worker& w = it->second;
  if (w.process != nullptr && !w.process->exited()) {
    if (signal) w.process->Signal(SIGTERM);
    leaving_.push_back({std::move(w.process), now + config_.kill_grace});
  }
  slots_.erase(it);
}

absl::StatusOr<WarmWorkers::Lent> WarmWorkers::Lend(int slot, const std::string& key,
                                                    int max_trials,
                                                    std::map<std::string, std::string> env,
                                                    comm::Envelope run_trial, absl::Time now) {
  if (max_trials <= 0) max_trials = config_.default_max_trials;
  auto it = slots_.find(slot);
  if (it != slots_.end()) {
    Worker& w = it->second;
    std::string why;
    if (w.process == nullptr || w.run_id != 0) {
      why = "it is still lent";  // never expected: a slot runs one trial at a time
    } else if (w.blank) {
      w.blank = false;
      w.key = key;
      TF_LOG(INFO) << "the prewarmed worker of slot " << slot << " (pid " << w.pid
                   << ") takes its first trial";
    } else if (w.key != key) {
      why = "the next trial has another sweep, config or environment";
    } else if (w.trials >= std::min(w.max_trials, max_trials)) {
      why = absl::StrCat("it ran its ", w.trials, " trial(s)");
    }
    if (!why.empty()) {
      TF_LOG(INFO) << "recycling the warm worker of slot " << slot << " (pid " << w.pid
                   << "): " << why;
      if (w.process == nullptr) {
        slots_.erase(it);  // its trial's rank holds (and stops) it
      } else {
        Retire(slot, now, /*signal=*/true);
      }
      it = slots_.end();
    }
  }
  if (it == slots_.end()) {
    absl::StatusOr<Worker*> started = Start(slot, key, max_trials, std::move(env), now);
    if (!started.ok()) return started.status();
    it = slots_.find(slot);
  }
  Worker& w = it->second;
  w.trials += 1;
  w.run_id = run_trial.run_trial().run_id();
  w.queued = std::move(run_trial);
  SendRunTrial(slot, w);
  Lent lent;
  lent.process = std::move(w.process);
  lent.name = absl::StrCat(config_.agent, "/slot-", LaneName(slot, config_.slots), "/w-", w.pid,
                           "#", w.trials);
  lent.log_path = w.log_path;
  return lent;
}

absl::Status WarmWorkers::Prewarm(int slot, std::map<std::string, std::string> env,
                                  absl::Time now) {
  if (slots_.count(slot) > 0) return absl::OkStatus();
  absl::StatusOr<Worker*> started =
      Start(slot, "", config_.default_max_trials, std::move(env), now);
  if (!started.ok()) return started.status();
  (*started)->blank = true;
  return absl::OkStatus();
}

absl::StatusOr<WarmWorkers::Worker*> WarmWorkers::Start(int slot, const std::string& key,
                                                        int max_trials,
                                                        std::map<std::string, std::string> env,
                                                        absl::Time now) {
  const std::string log_path =
      absl::StrCat(config_.log_dir, "/workers/slot-", LaneName(slot, config_.slots), ".log");
  env["TUNEFLEET_WORKER_SLOT"] = std::to_string(slot);
  env["TUNEFLEET_WORKER_MAX_TRIALS"] = std::to_string(max_trials);
  ProcessSpec ps;
  ps.binary = config_.trainer_binary;
  ps.args = {"worker"};
  ps.env = std::move(env);
  ps.log_path = log_path;
  // Between trials nobody drains a pipe; during one the worker writes to the trial's log.
  ps.stderr_to_log = true;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(ps);
  if (!child.ok()) {
    return absl::Status(child.status().code(),
                        absl::StrCat("cannot start a warm worker: ", child.status().message()));
  }
  Worker w;
  w.pid = (*child)->pid();
  w.process = std::move(*child);
  w.key = key;
  w.max_trials = max_trials;
  w.started = now;
  w.log_path = log_path;
  TF_LOG(INFO) << (key.empty() ? "prewarmed" : "started") << " a warm worker for slot " << slot
               << " (pid " << w.pid << ", log " << log_path << ")";
  return &slots_.emplace(slot, std::move(w)).first->second;
}

bool WarmWorkers::Registered(const std::string& identity, const comm::Register& reg) {
  auto it = slots_.find(reg.slot());
  if (it == slots_.end() || (reg.pid() != 0 && reg.pid() != it->second.pid) ||
      !it->second.identity.empty()) {
    TF_LOG(WARNING) << "a warm worker registered for slot " << reg.slot() << " (pid " << reg.pid()
                    << ") that this agent did not start or knows already; ignored";
    return false;
  }
  Worker& w = it->second;
  w.identity = identity;
  TF_LOG(INFO) << "the warm worker of slot " << reg.slot() << " (pid " << w.pid
               << ") registered after "
               << absl::FormatDuration(absl::Trunc(absl::Now() - w.started, absl::Milliseconds(1)));
  SendRunTrial(reg.slot(), w);
  return true;
}

std::optional<int> WarmWorkers::SlotRunning(const std::string& identity, uint64_t run_id) const {
  for (const auto& [slot, w] : slots_) {
    if (w.identity == identity && w.run_id == run_id && run_id != 0) return slot;
  }
  return std::nullopt;
}

void WarmWorkers::GiveBack(int slot, std::unique_ptr<ChildProcess> process, bool retiring,
                           absl::Time now) {
  auto it = slots_.find(slot);
  if (it == slots_.end() || process == nullptr || it->second.pid != process->pid()) {
    // Not the slot's worker any more: let it go like any other.
    if (process != nullptr) leaving_.push_back({std::move(process), now + config_.kill_grace});
    return;
  }
  Worker& w = it->second;
  w.process = std::move(process);
  w.run_id = 0;
  if (retiring) {
    TF_LOG(INFO) << "the warm worker of slot " << slot << " (pid " << w.pid << ") retires after "
                 << w.trials << " trial(s)";
    Retire(slot, now, /*signal=*/false);  // it exits by itself; SIGKILL after the grace
  }
}

bool WarmWorkers::ChildEnded(pid_t pid, int status) {
  for (auto it = slots_.begin(); it != slots_.end(); ++it) {
    Worker& w = it->second;
    if (w.pid != pid) continue;
    if (w.process != nullptr) {
      w.process->SetExitStatus(status);
      TF_LOG(WARNING) << "the idle warm worker of slot " << it->first << " (pid " << pid
                      << ") ended: " << w.process->DescribeExit() << " (log " << w.log_path << ")";
    }  // else its trial's rank recorded it
    slots_.erase(it);
    return true;
  }
  for (auto it = leaving_.begin(); it != leaving_.end(); ++it) {
    if (it->process->pid() != pid) continue;
    it->process->SetExitStatus(status);
    leaving_.erase(it);
    return true;
  }
  return false;
}

std::vector<std::pair<uint64_t, std::string>> WarmWorkers::Tick(absl::Time now) {
  for (Leaving& l : leaving_) {
    if (now >= l.kill_at && !l.process->exited()) {
      l.process->Signal(SIGKILL);
      l.kill_at = absl::InfiniteFuture();
    }
  }
  std::vector<std::pair<uint64_t, std::string>> overdue;
  for (auto& [slot, w] : slots_) {
    if (!w.identity.empty() || w.run_id == 0 || w.overdue_reported ||
        now < w.started + config_.register_timeout) {
      continue;
    }
    w.overdue_reported = true;
    overdue.emplace_back(w.run_id, absl::StrCat("the warm worker of slot ", slot, " (pid ", w.pid,
                                                ") did not register within ",
                                                absl::FormatDuration(config_.register_timeout),
                                                "; see ", w.log_path));
  }
  return overdue;
}

void WarmWorkers::StopAll(absl::Time now) {
  std::vector<int> idle;
  for (const auto& [slot, w] : slots_) {
    if (w.process != nullptr) idle.push_back(slot);
  }
  for (int slot : idle) Retire(slot, now, /*signal=*/true);
}

}  // namespace launcher
}  // namespace tunefleet
