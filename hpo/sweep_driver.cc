#include "hpo/sweep_driver.h"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/codec.h"
#include "comm/curve_auth.h"
#include "comm/zmq_channel.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hpo/lr_scaling.h"
#include "hpo/pruners/pruner_factory.h"
#include "hpo/study_json.h"
#include "hpo/sweep_plan.h"
#include "hpo/trial_command.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string AbsoluteDir(const std::string& file) {
  std::string dir = file.substr(0, file.rfind('/') == std::string::npos ? 0 : file.rfind('/'));
  if (dir.empty()) dir = ".";
  if (dir[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) != nullptr) dir = std::string(cwd) + "/" + dir;
  }
  return dir;
}

int TerminalRows() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 8) return ws.ws_row;
  return 24;
}

}  // namespace

SweepDriver::SweepDriver(SweepConfig config, Options options, SignalFd* signals)
    : config_(std::move(config)),
      options_(std::move(options)),
      signals_(signals),
      space_(BuildSearchSpace(config_)),
      run_dir_(AbsoluteDir(config_.journal)),
      sampler_(config_),
      pruner_(MakePruner(config_)),
      table_(config_),
      context_(1) {
  study_.name = config_.name;
  study_.maximize = config_.maximize;
}

SweepDriver::~SweepDriver() = default;

absl::Status SweepDriver::OpenJournal() {
  struct stat st;
  const bool exists = ::stat(config_.journal.c_str(), &st) == 0 && st.st_size > 0;
  if (exists && !options_.resume) {
    return absl::AlreadyExistsError(absl::StrCat(
        "journal ", config_.journal, " already holds a sweep; pass --resume to continue it, or "
        "--journal PATH to start another"));
  }
  if (exists) {
    ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(config_.journal));
    if (contents.study_name != config_.name) {
      return absl::FailedPreconditionError(absl::StrCat("journal ", config_.journal, " holds sweep '",
                                                        contents.study_name, "', not '", config_.name, "'"));
    }
    if (contents.maximize != config_.maximize) {
      return absl::FailedPreconditionError(
          absl::StrCat("journal ", config_.journal, " was made for the other metric goal"));
    }
    study_ = std::move(contents.study);
    ASSIGN_OR_RETURN(journal_, JournalWriter::Open(config_.journal));
    int interrupted = 0;
    for (Trial& t : study_.trials) {
      if (t.state != TrialState::kRunning && t.state != TrialState::kWaiting) continue;
      t.fail_reason = "interrupted";
      RETURN_IF_ERROR(FinishTrial(t, TrialState::kFail));
      ++interrupted;
    }
    // Points left unsettled by failures get their next attempt (the latest attempt is retried).
    std::map<int64_t, int64_t> latest;  // point -> latest trial number
    for (const Trial& t : study_.trials) latest[t.point] = t.number;
    for (const auto& [point, number] : latest) {
      if (point >= 0 && !sampler_.Settled(study_, point)) retries_.push_back(number);
    }
    std::cout << "resuming sweep " << config_.name << " from " << config_.journal << ": "
              << study_.trials.size() << " trial(s) recorded, " << interrupted
              << " interrupted, " << retries_.size() << " point(s) to run again\n";
    return absl::OkStatus();
  }
  if (options_.resume) std::cout << "no journal at " << config_.journal << "; starting the sweep\n";
  ASSIGN_OR_RETURN(journal_, JournalWriter::Open(config_.journal));
  RETURN_IF_ERROR(journal_->CreateStudy(config_.name, config_.maximize));
  for (const auto& [key, raw] : StudyUserAttrs()) {
    RETURN_IF_ERROR(journal_->SetStudyUserAttr(key, raw));
  }
  return absl::OkStatus();
}

void SweepDriver::Send(const comm::Envelope& envelope) {
  absl::Status s = comm::Send(*socket_, envelope);
  if (!s.ok()) {
    TF_LOG(WARNING) << "cannot send " << comm::BodyName(envelope) << " to the head: " << s.message();
    return;
  }
  if (head_liveness_) head_liveness_->Sent(absl::Now());
}

absl::Status SweepDriver::OpenSocket() {
  try {
    auto socket = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::dealer);
    comm::ConfigureSocket(*socket, /*router=*/false);
    if (!options_.keys_dir.empty()) {
      absl::StatusOr<comm::ClientKeys> keys = comm::LoadClientKeys(options_.keys_dir);
      if (!keys.ok()) return absl::InvalidArgumentError(keys.status().message());
      comm::MakeCurveClient(*socket, *keys);
    }
    socket->connect(options_.head);
    socket_ = std::move(socket);  // the old one closes without lingering (ConfigureSocket)
  } catch (const zmq::error_t& e) {
    return absl::InvalidArgumentError(absl::StrCat("--head ", options_.head, ": ", e.what()));
  }
  SendRegister();
  return absl::OkStatus();
}

void SweepDriver::SendRegister() {
  comm::Envelope hello;
  comm::Register* r = hello.mutable_register_();
  r->set_role(comm::CLIENT);
  r->set_name(absl::StrCat(config_.name, "/", ::getpid()));
  r->set_pid(::getpid());
  r->set_previous_session(session_);
  Send(hello);
  registered_at_ = absl::Now();
}

void SweepDriver::LoseHead(const std::string& why) {
  if (!head_lost_) {
    head_lost_ = true;
    head_lost_at_ = absl::Now();
    std::cout << why << ": " << running_.size() << " trial(s) go on on the agents; waiting up to "
              << absl::FormatDuration(options_.head_grace) << " for the head to come back\n"
              << std::flush;
  }
  registered_at_ = absl::InfinitePast();
}

void SweepDriver::Resubmit() {
  for (const auto& [number, run] : running_) {
    comm::Envelope envelope;
    *envelope.mutable_submit()->mutable_trial() = run.spec;
    envelope.mutable_submit()->set_resubmit(true);
    Send(envelope);
  }
}

absl::Status SweepDriver::Connect() {
  RETURN_IF_ERROR(OpenSocket());
  const absl::Time deadline = absl::Now() + options_.connect_timeout;
  while (absl::Now() < deadline) {
    zmq::pollitem_t items[] = {{static_cast<void*>(*socket_), 0, ZMQ_POLLIN, 0},
                               {nullptr, signals_->fd(), ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(100));
    if (!signals_->Read().empty()) return absl::CancelledError("interrupted while connecting");
    if (options_.health_check) RETURN_IF_ERROR(options_.health_check());
    while (auto received = comm::TryReceive(*socket_, /*router=*/false)) {
      if (!received->envelope.ok()) {
        return absl::FailedPreconditionError(absl::StrCat("the head at ", options_.head, " answered: ",
                                                          received->envelope.status().message()));
      }
      const comm::Envelope& e = *received->envelope;
      if (e.body_case() == comm::Envelope::kRefused) {
        return absl::PermissionDeniedError(absl::StrCat("the head refused this sweep: ", e.refused().reason()));
      }
      if (e.body_case() == comm::Envelope::kWelcome) {
        const uint32_t ms = e.welcome().heartbeat_interval_ms();
        head_liveness_ = std::make_unique<comm::Liveness>(ms > 0 ? absl::Milliseconds(ms) : absl::Seconds(1),
                                                          absl::Now());
        session_ = e.welcome().session();
        return absl::OkStatus();
      }
    }
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "no head answered at ", options_.head, " within ",
      absl::FormatDuration(options_.connect_timeout),
      options_.keys_dir.empty() ? " (if the head runs with --keys, give hpo --keys too)"
                                : " (is this client's key in the head's authorized_keys?)"));
}

absl::Status SweepDriver::CreateTrial(std::optional<int64_t> retry_of) {
  Trial t;
  t.number = static_cast<int64_t>(study_.trials.size());
  t.state = TrialState::kRunning;
  t.datetime_start = OptunaDatetimeNow();
  if (retry_of.has_value()) {
    const Trial& failed = study_.trials[static_cast<size_t>(*retry_of)];
    t.params = failed.params;
    t.point = failed.point;
    t.phase = failed.phase;
    t.lr_effective = failed.lr_effective;
    t.failed_trial = failed.failed_trial.value_or(failed.number);
    t.retry_history = failed.retry_history;
    t.retry_history.push_back(failed.number);
  } else {
    SampleTrial(sampler_, study_, &t, space_);
    t.lr_effective = EffectiveLr(config_, t.params.at(kLrParam),
                                 static_cast<int64_t>(t.params.at(kBatchParam)));
  }
  study_.trials.push_back(t);
  RETURN_IF_ERROR(journal_->CreateTrial(t, space_));
  comm::Envelope envelope;
  comm::TrialSpec* spec = envelope.mutable_submit()->mutable_trial();
  spec->set_trial(t.number);
  spec->set_sweep(config_.name);
  spec->set_world_size(static_cast<int32_t>(config_.gpus_per_trial));
  for (const std::string& a : TrainerArgs(config_, t, run_dir_)) spec->add_argv(a);
  spec->set_log_dir(run_dir_ + "/logs");
  for (const std::string& path : config_.stage) spec->add_stage()->set_path(path);
  if (config_.fetch_back && !config_.trainer.synthetic) {
    spec->set_fetch_back(absl::StrCat(run_dir_, "/trial-", t.number));  // its output.dir
  }
  Send(envelope);
  running_[t.number] = Running{};
  running_[t.number].spec = *spec;
  if (retry_of.has_value() && !options_.live) {
    std::cout << "trial " << t.number << " retries trial " << *retry_of << " (attempt "
              << t.retry_history.size() + 1 << " of " << config_.max_failures_per_trial + 1 << ")\n";
  }
  return absl::OkStatus();
}

absl::Status SweepDriver::Fill() {
  while (static_cast<int64_t>(running_.size()) < config_.max_concurrent_trials) {
    if (!retries_.empty()) {
      const int64_t n = retries_.front();
      retries_.pop_front();
      RETURN_IF_ERROR(CreateTrial(n));
      continue;
    }
    if (sampler_.NextAvailability(study_) != Availability::kReady) break;
    RETURN_IF_ERROR(CreateTrial(std::nullopt));
  }
  return absl::OkStatus();
}

void SweepDriver::SendDecision(int64_t trial, int64_t step, bool stop) {
  comm::Envelope envelope;
  comm::Decision* d = envelope.mutable_decision();
  d->set_trial(trial);
  d->set_step(step);
  d->set_action(stop ? comm::Decision::STOP : comm::Decision::CONTINUE);
  Send(envelope);
}

absl::Status SweepDriver::HandleReport(const comm::Report& report) {
  auto it = running_.find(report.trial());
  if (it == running_.end()) return absl::OkStatus();
  Trial& t = study_.trials[static_cast<size_t>(report.trial())];
  auto metric = report.metrics().find(config_.metric_name);
  if (metric == report.metrics().end()) {
    if (!it->second.missing_metric_logged) {
      std::vector<std::string> names;
      for (const auto& [k, v] : report.metrics()) names.push_back(k);
      TF_LOG(WARNING) << "trial " << t.number << " reported no '" << config_.metric_name
                      << "' (it reported: " << absl::StrJoin(names, ", ") << ")";
      it->second.missing_metric_logged = true;
    }
    SendDecision(t.number, report.step(), false);  // a final report's acknowledgement too
    return absl::OkStatus();
  }
  if (report.final()) {
    it->second.final_value = metric->second;
    SendDecision(t.number, report.step(), false);  // acknowledges it: the trainer may exit
    return absl::OkStatus();
  }
  if (it->second.stop_sent) return absl::OkStatus();
  // Like Optuna's trial.report(), a step reported twice keeps its first value.
  if (t.intermediate_values.emplace(report.step(), metric->second).second) {
    RETURN_IF_ERROR(journal_->SetIntermediateValue(t.number, report.step(), metric->second));
  }
  const std::map<std::string, double> before = t.system_attrs;
  const bool prune = pruner_->Prune(&study_, static_cast<size_t>(t.number));
  for (const auto& [key, value] : study_.trials[static_cast<size_t>(report.trial())].system_attrs) {
    auto b = before.find(key);
    if (b == before.end() || !(b->second == value || (std::isnan(b->second) && std::isnan(value)))) {
      RETURN_IF_ERROR(journal_->SetSystemAttr(report.trial(), key, value));
    }
  }
  if (prune) it->second.stop_sent = true;
  SendDecision(report.trial(), report.step(), prune);
  return absl::OkStatus();
}

absl::Status SweepDriver::FinishTrial(Trial& t, TrialState state) {
  t.state = state;
  t.datetime_complete = OptunaDatetimeNow();
  if (state == TrialState::kPruned) {
    // Optuna records a pruned trial's last intermediate value as its value (when feasible).
    t.value.reset();
    if (!t.intermediate_values.empty() && std::isfinite(t.intermediate_values.rbegin()->second)) {
      t.value = t.intermediate_values.rbegin()->second;
    }
  }
  if (state == TrialState::kFail) t.value.reset();
  RETURN_IF_ERROR(journal_->Finish(t));
  sampler_.AfterTrial(study_, t);
  return absl::OkStatus();
}

absl::Status SweepDriver::HandleExit(const comm::Exit& exit) {
  auto it = running_.find(exit.trial());
  if (it == running_.end()) return absl::OkStatus();
  const Running run = it->second;
  running_.erase(it);
  Trial& t = study_.trials[static_cast<size_t>(exit.trial())];
  TrialState state = TrialState::kFail;
  switch (exit.outcome()) {
    case comm::Exit::COMPLETED: {
      std::optional<double> value = run.final_value;
      if (!value.has_value() && !t.intermediate_values.empty()) value = t.intermediate_values.rbegin()->second;
      if (run.stop_sent) {
        state = TrialState::kPruned;
      } else if (value.has_value()) {
        state = TrialState::kComplete;
        t.value = value;
      } else {
        t.fail_reason = absl::StrCat("finished without reporting ", config_.metric_name);
      }
      break;
    }
    case comm::Exit::STOPPED:
      state = TrialState::kPruned;
      break;
    case comm::Exit::CANCELLED:
      if (run.stop_sent) {
        state = TrialState::kPruned;
      } else {
        t.fail_reason = interrupting_ ? "interrupted" : absl::StrCat("cancelled: ", exit.reason());
      }
      break;
    case comm::Exit::FAILED:
    default:
      t.fail_reason = exit.reason().empty() ? "failed" : exit.reason();
      t.stderr_tail = exit.stderr_tail();
      if (run.stop_sent) {
        // It was told to stop and then crashed: the pruning decision stands.
        state = TrialState::kPruned;
        t.fail_reason.clear();
        t.stderr_tail.clear();
      }
      break;
  }
  RETURN_IF_ERROR(FinishTrial(t, state));
  if (!options_.live) std::cout << table_.EventLine(t);
  if (state == TrialState::kFail && !interrupting_ && !absl::StartsWith(t.fail_reason, "interrupted")) {
    if (!t.stderr_tail.empty() && !options_.live) {
      std::string tail = t.stderr_tail;
      const size_t keep = tail.rfind('\n', tail.size() > 1 ? tail.size() - 2 : 0);
      std::cout << "  last stderr: " << (keep == std::string::npos ? tail : tail.substr(keep + 1));
      if (!absl::EndsWith(tail, "\n")) std::cout << "\n";
    }
    if (!sampler_.Settled(study_, t.point)) {
      retries_.push_back(t.number);
    } else if (!options_.live) {
      std::cout << "  giving up on this point after " << config_.max_failures_per_trial + 1
                << " failed attempt(s)\n";
    }
  }
  // Piped to a file or another program, each event still shows up as it happens.
  if (!options_.live) std::cout << std::flush;
  return absl::OkStatus();
}

absl::Status SweepDriver::HandleMessage(const comm::Envelope& envelope) {
  switch (envelope.body_case()) {
    case comm::Envelope::kHeartbeat:
      return absl::OkStatus();
    case comm::Envelope::kWelcome: {
      if (!head_lost_) return absl::OkStatus();
      const uint32_t ms = envelope.welcome().heartbeat_interval_ms();
      head_liveness_ = std::make_unique<comm::Liveness>(
          ms > 0 ? absl::Milliseconds(ms) : absl::Seconds(1), absl::Now());
      const bool restarted = envelope.welcome().session() != session_;
      session_ = envelope.welcome().session();
      head_lost_ = false;
      std::cout << "the head is back" << (restarted ? " (restarted)" : "") << " after "
                << absl::FormatDuration(absl::Trunc(absl::Now() - head_lost_at_, absl::Milliseconds(100)))
                << "; submitting the " << running_.size() << " unfinished trial(s) again: it "
                << "finds those the agents still run\n" << std::flush;
      Resubmit();
      return absl::OkStatus();
    }
    case comm::Envelope::kStarted: {
      auto it = running_.find(envelope.started().trial());
      if (it == running_.end()) return absl::OkStatus();
      const comm::Started& s = envelope.started();
      it->second.placed[s.agent()].assign(s.slots().begin(), s.slots().end());
      // Journaled as the trial's user attr "placement" (Optuna shows it too).
      Trial& t = study_.trials[static_cast<size_t>(s.trial())];
      t.placement = Placement(it->second.placed);
      return journal_->SetUserAttr(t.number, "placement", JsonString(t.placement));
    }
    case comm::Envelope::kReport:
      return HandleReport(envelope.report());
    case comm::Envelope::kExit:
      return HandleExit(envelope.exit());
    case comm::Envelope::kRefused:
      if (envelope.refused().reason() == comm::kRefusedRegisterFirst &&
          options_.head_grace > absl::ZeroDuration() && !session_.empty() &&
          envelope.refused().session() != session_) {
        if (!head_lost_) {
          LoseHead(absl::StrCat("the head at ", options_.head, " restarted"));
          SendRegister();
        }
        return absl::OkStatus();
      }
      return absl::PermissionDeniedError(absl::StrCat("the head refused this sweep: ", envelope.refused().reason()));
    case comm::Envelope::kShutdown:
      return absl::UnavailableError(absl::StrCat("the head shut down: ", envelope.shutdown().reason()));
    default:
      TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from the head";
      return absl::OkStatus();
  }
}

void SweepDriver::Interrupt() {
  interrupting_ = true;
  interrupt_deadline_ = absl::Now() + absl::Seconds(15);
  std::cout << "\ninterrupted: stopping " << running_.size() << " running trial(s)...\n" << std::flush;
  for (const auto& [number, run] : running_) {
    comm::Envelope envelope;
    envelope.mutable_cancel()->set_trial(number);
    envelope.mutable_cancel()->set_reason("the sweep was interrupted");
    Send(envelope);
  }
}

absl::Status SweepDriver::InterruptRunning(const std::string& reason) {
  for (const auto& [number, run] : running_) {
    Trial& t = study_.trials[static_cast<size_t>(number)];
    t.fail_reason = reason;
    RETURN_IF_ERROR(FinishTrial(t, TrialState::kFail));
  }
  running_.clear();
  return absl::OkStatus();
}

SweepProgress SweepDriver::Progress() const {
  SweepProgress p;
  p.elapsed = absl::Now() - start_;
  p.planned = sampler_.random_points();
  if (sampler_.grid().has_value()) {
    p.planned += static_cast<int64_t>(sampler_.grid()->size());
    p.planned_exact = true;
  } else {
    p.planned = MaxPlannedTrials(config_);
  }
  for (const auto& [number, run] : running_) {
    p.where[number] = run.placed.empty() ? "queued" : "running";
  }
  return p;
}

void SweepDriver::Show(bool force) {
  const absl::Time now = absl::Now();
  if (!options_.live || (!force && now - last_shown_ < absl::Milliseconds(250))) return;
  last_shown_ = now;
  std::string block = table_.Render(study_, Progress(), std::max(4, TerminalRows() - 4));
  std::string out;
  if (shown_lines_ > 0) out = absl::StrCat("\x1b[", shown_lines_, "F\x1b[J");
  out += block;
  shown_lines_ = static_cast<int>(std::count(block.begin(), block.end(), '\n'));
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

std::string SweepDriver::Summary() const {
  return table_.Summary(study_, Progress(), config_.journal);
}

std::map<std::string, std::string> SweepDriver::StudyUserAttrs() const {
  return {{"metric", JsonString(config_.metric_name)}, {"search_method", JsonString(config_.method)}};
}

absl::Status SweepDriver::WriteReport() const {
  if (options_.report_json.empty()) return absl::OkStatus();
  const std::string tmp = options_.report_json + ".tmp";
  {
    std::ofstream out(tmp);
    out << StudyToJson(study_, space_, StudyUserAttrs());
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), options_.report_json.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", options_.report_json));
  }
  return absl::OkStatus();
}

absl::Status SweepDriver::Run() {
  start_ = absl::Now();
  RETURN_IF_ERROR(OpenJournal());
  RETURN_IF_ERROR(Connect());
  absl::Status failure;
  while (true) {
    if (!interrupting_ && !head_lost_) {
      failure = Fill();
      if (!failure.ok()) break;
    }
    if (running_.empty() && retries_.empty()) {
      if (interrupting_) break;
      const Availability a = sampler_.NextAvailability(study_);
      if (a == Availability::kExhausted) break;
      if (a == Availability::kWait) {
        failure = absl::InternalError("the sampler waits for trials but none is running");
        break;
      }
    }
    zmq::pollitem_t items[] = {{static_cast<void*>(*socket_), 0, ZMQ_POLLIN, 0},
                               {nullptr, signals_->fd(), ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(100));
    const std::vector<int> signals = signals_->Read();
    if (!signals.empty()) {
      if (interrupting_) break;  // a second Ctrl-C: stop waiting
      Interrupt();
    }
    while (auto received = comm::TryReceive(*socket_, /*router=*/false)) {
      head_liveness_->Heard(absl::Now());
      if (!received->envelope.ok()) {
        TF_LOG(WARNING) << "dropped a frame from the head: " << received->envelope.status().message();
        continue;
      }
      failure = HandleMessage(*received->envelope);
      if (!failure.ok()) break;
    }
    if (!failure.ok()) break;
    const absl::Time now = absl::Now();
    if (!head_lost_ && head_liveness_->HeartbeatDue(now)) {
      comm::Envelope hb;
      hb.mutable_heartbeat();
      Send(hb);
    }
    if (!head_lost_ && !head_liveness_->Alive(now)) {
      const std::string lost = absl::StrCat("lost the head at ", options_.head, " (no heartbeat for ",
                                            absl::FormatDuration(head_liveness_->interval() * comm::kDefaultLiveness), ")");
      if (options_.head_grace <= absl::ZeroDuration() || interrupting_) {
        failure = absl::UnavailableError(lost);
        break;
      }
      LoseHead(lost);
    }
    if (head_lost_) {
      if (now - head_lost_at_ > options_.head_grace) {
        failure = absl::UnavailableError(absl::StrCat(
            "the head at ", options_.head, " did not come back within ",
            absl::FormatDuration(options_.head_grace)));
        break;
      }
      if (now - registered_at_ >= absl::Seconds(3)) {
        failure = OpenSocket();
        if (!failure.ok()) break;
      }
    }
    if (options_.health_check && now - last_health_check_ > absl::Milliseconds(500)) {
      last_health_check_ = now;
      failure = options_.health_check();
      if (!failure.ok()) break;
    }
    if (interrupting_ && now > interrupt_deadline_) break;
    Show(false);
  }
  absl::Status cleanup = InterruptRunning(failure.ok() ? "interrupted" : absl::StrCat("interrupted: ", failure.message()));
  Show(true);
  absl::Status report = WriteReport();
  if (!failure.ok()) return failure;
  if (!cleanup.ok()) return cleanup;
  if (!report.ok()) return report;
  if (interrupting_) return absl::CancelledError("interrupted");
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
