#include "hpo/sweep_driver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/codec.h"
#include "comm/zmq_channel.h"
#include "common/clip.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/config/sweep_preflight.h"
#include "hpo/journal/journal_file.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/study_json.h"
#include "hpo/report/report.h"
#include "hpo/search_space.h"
#include "hpo/trial_command.h"

namespace tunefleet {
namespace hpo {
namespace {

// "0.1 s", "12.3 s": a span with its unit, to a tenth of a second.
std::string FormatSeconds(absl::Duration d) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", absl::ToDoubleSeconds(d));
  return text;
}

}  // namespace

SweepDriver::SweepDriver(SweepConfig config, Options options, SignalFd* signals)
    : config_(std::move(config)),
      options_(std::move(options)),
      signals_(signals),
      run_dir_(RunDir(config_.journal)),
      table_(config_),
      context_(1),
      console_(options_.live, options_.out, [this](int max_rows) {
        return table_.Render(engine_->study(), Progress(), max_rows);
      }) {}

SweepDriver::~SweepDriver() = default;

absl::Status SweepDriver::OpenJournal() {
  RETURN_IF_ERROR(CheckJournalPath(config_.journal));  // a folder, or folders not to create
  ASSIGN_OR_RETURN(std::optional<JournalContents> to_resume,
                   ReadJournalToResume(config_, options_.resume));
  if (to_resume.has_value()) {
    JournalContents contents = *std::move(to_resume);
    ASSIGN_OR_RETURN(journal_, JournalWriter::Open(config_.journal));
    engine_ = std::make_unique<SweepEngine>(config_, journal_.get());
    const size_t recorded = contents.study.trials.size();
    ASSIGN_OR_RETURN(SweepEngine::Resumed resumed, engine_->Resume(std::move(contents)));
    console_.out() << "resuming sweep " << config_.name << " from " << config_.journal << ": "
                   << recorded << " trial(s) recorded, " << resumed.interrupted << " interrupted, "
                   << resumed.to_rerun << " point(s) to run again\n";
    if (!resumed.changed_params.empty()) {
      console_.out() << "warning: the search space changed since the journal's trials ran: "
                     << absl::StrJoin(resumed.changed_params, ", ")
                     << " (their distributions differ from the sweep file's); resuming anyway\n";
    }
    return absl::OkStatus();
  }
  if (options_.resume) {
    console_.out() << "no journal at " << config_.journal << "; starting the sweep\n";
  }
  ASSIGN_OR_RETURN(journal_, JournalWriter::Open(config_.journal));
  engine_ = std::make_unique<SweepEngine>(config_, journal_.get());
  return engine_->CreateStudy();
}

void SweepDriver::Send(const comm::Envelope& envelope) { head_->Send(envelope, absl::Now()); }

comm::Envelope SweepDriver::MakeRegister() const {
  comm::Envelope hello;
  comm::Register* r = hello.mutable_register_();
  r->set_role(comm::CLIENT);
  r->set_name(absl::StrCat(config_.name, "/", ::getpid()));
  r->set_pid(::getpid());
  return hello;
}

void SweepDriver::LoseHead(const std::string& why) {
  if (head_->Lose(absl::Now())) AnnounceHeadLost(why);
}

void SweepDriver::AnnounceHeadLost(const std::string& why) const {
  console_.out() << why << ": " << running_.size()
                 << " trial(s) go on on the agents; waiting up to "
                 << absl::FormatDuration(options_.head_grace) << " for the head to come back\n"
                 << std::flush;
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
  comm::HeadSession::Options session;
  session.head = options_.head;
  session.keys_dir = options_.keys_dir;
  session.head_grace = options_.head_grace;
  head_ = std::make_unique<comm::HeadSession>(context_, std::move(session),
                                              [this] { return MakeRegister(); });
  if (absl::Status s = head_->Connect(absl::Now()); !s.ok()) {
    return absl::InvalidArgumentError(s.message());
  }
  const absl::Time deadline = absl::Now() + options_.connect_timeout;
  while (absl::Now() < deadline) {
    zmq::pollitem_t items[] = {{static_cast<void*>(head_->socket()), 0, ZMQ_POLLIN, 0},
                               {nullptr, signals_->fd(), ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(100));
    if (!signals_->Read().empty()) return absl::CancelledError("interrupted while connecting");
    if (options_.health_check) RETURN_IF_ERROR(options_.health_check());
    while (auto received = head_->Receive(absl::Now())) {
      if (!received->envelope.ok()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the head at ", options_.head, " answered: ", received->envelope.status().message()));
      }
      const comm::Envelope& e = *received->envelope;
      if (e.body_case() == comm::Envelope::kRefused) {
        return absl::PermissionDeniedError(
            absl::StrCat("the head refused this sweep: ", e.refused().reason()));
      }
      if (e.body_case() == comm::Envelope::kWelcome) {
        head_->OnWelcome(e.welcome(), absl::Now());
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

void SweepDriver::Submit(int64_t number) {
  const Trial& t = engine_->study().trials[static_cast<size_t>(number)];
  comm::Envelope envelope;
  comm::TrialSpec* spec = envelope.mutable_submit()->mutable_trial();
  double memory_mib = 0;
  if (config_.trials_per_gpu > 1) {
    const int64_t batch = static_cast<int64_t>(t.params.at(kBatchParam));
    auto known = memory_mib_.find(batch);
    if (known == memory_mib_.end()) {
      known = memory_mib_.emplace(batch, TrialMemoryMib(config_, batch)).first;
    }
    memory_mib = known->second;
  }
  FillTrialSpec(config_, t, run_dir_, memory_mib, spec);
  Send(envelope);
  running_[t.number] = RunningTrial{};
  running_[t.number].spec = *spec;
  // Interrupted attempts do not count in its attempt number (as the sampler's Settled()).
  if (!console_.live()) console_.out() << engine_->RetryLine(t.number);
}

absl::Status SweepDriver::Fill() {
  ASSIGN_OR_RETURN(std::vector<int64_t> started, engine_->Fill());
  for (int64_t number : started) Submit(number);
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
  if (!report.warning().empty()) {  // about its reports (a program's line that is not JSON)
    console_.Print(absl::StrCat("trial ", report.trial(), ": ", Printable(report.warning()), "\n"));
    return absl::OkStatus();
  }
  auto metric = report.metrics().find(config_.metric_name);
  if (metric == report.metrics().end()) {
    if (!it->second.missing_metric_logged) {
      std::vector<std::string> names;
      for (const auto& [k, v] : report.metrics()) names.push_back(k);
      TF_LOG(WARNING) << "trial " << report.trial() << " reported no '" << config_.metric_name
                      << "' (it reported: " << absl::StrJoin(names, ", ") << ")";
      it->second.missing_metric_logged = true;
    }
    SendDecision(report.trial(), report.step(), false);  // a final report's acknowledgement too
    return absl::OkStatus();
  }
  if (engine_->StopDecided(report.trial())) return absl::OkStatus();
  ASSIGN_OR_RETURN(const bool stop, engine_->Report(report.trial(), report.samples(),
                                                    metric->second, report.final()));
  // A final report's CONTINUE acknowledges it: the trainer may exit.
  SendDecision(report.trial(), report.step(), stop);
  // A program learns nothing from a Decision: its ranks are stopped, on every node, by a Cancel
  // (SIGTERM, SIGKILL after trainer.kill_grace_s); the trial ends PRUNED all the same.
  if (stop && it->second.spec.has_program()) Send(CancelFor(report.trial(), "pruned"));
  return absl::OkStatus();
}

absl::Status SweepDriver::RecordGpuUsage(int64_t trial, const RunningTrial& run) {
  const std::optional<GpuTotals> gpu = CombinedGpuUsage(run);
  if (!gpu.has_value()) return absl::OkStatus();
  return engine_->SetGpuUsage(trial, gpu->util_mean, gpu->mem_peak_mib, gpu->energy_j);
}

absl::Status SweepDriver::RunAlone(RunningTrial& run, const comm::Exit& exit) {
  console_.out() << "trial " << exit.trial() << " ran out of GPU memory sharing a GPU ("
                 << exit.reason() << " on " << exit.agent() << "); running it again alone\n"
                 << std::flush;
  Send(SubmitAlone(run));
  return engine_->SetRequeuedAlone(exit.trial());
}

absl::Status SweepDriver::HandleExit(const comm::Exit& exit) {
  auto it = running_.find(exit.trial());
  if (it == running_.end()) return absl::OkStatus();
  RETURN_IF_ERROR(RecordGpuUsage(exit.trial(), it->second));
  std::optional<absl::Duration> ran;  // from its ranks' start, when they started
  if (it->second.started != absl::InfinitePast()) ran = absl::Now() - it->second.started;
  if ((exit.outcome() == comm::Exit::COMPLETED || exit.outcome() == comm::Exit::STOPPED) &&
      ran.has_value()) {
    trial_durations_.push_back(*ran);
  }
  if (exit.outcome() == comm::Exit::FAILED && exit.cause() == comm::Exit::OUT_OF_MEMORY &&
      it->second.spec.trials_per_gpu() > 1 && !interrupting_) {
    return RunAlone(it->second, exit);
  }
  running_.erase(it);
  RunEnd end = RunEnd::kFailed;
  switch (exit.outcome()) {
    case comm::Exit::COMPLETED:
      end = RunEnd::kCompleted;
      break;
    case comm::Exit::STOPPED:
      end = RunEnd::kStopped;
      break;
    case comm::Exit::CANCELLED:
      end = RunEnd::kCancelled;
      break;
    default:
      end = exit.cause() == comm::Exit::TRANSIENT ? RunEnd::kFailed : RunEnd::kRefused;
      break;
  }
  ASSIGN_OR_RETURN(SweepEngine::Ended ended, engine_->EndTrial(exit.trial(), end, exit.reason(),
                                                               exit.stderr_tail(), interrupting_));
  if (ended.trial == nullptr) return absl::OkStatus();
  const std::string lines =
      TrialEndLines(table_, config_, *ended.trial, ended, ran, console_.live());
  if (!lines.empty()) console_.Print(lines);
  html_report_->Changed();
  if (exit.outcome() == comm::Exit::FAILED && exit.cause() == comm::Exit::CLUSTER_TOO_SMALL) {
    return absl::InvalidArgumentError(
        absl::StrCat("the cluster cannot run this sweep's trials: ", exit.reason(),
                     " (resources.gpus_per_trial: ", config_.gpus_per_trial, ")"));
  }
  return absl::OkStatus();
}

absl::Status SweepDriver::HandleMessage(const comm::Envelope& envelope) {
  switch (envelope.body_case()) {
    case comm::Envelope::kHeartbeat:
      return absl::OkStatus();
    case comm::Envelope::kWelcome: {
      if (!head_->lost()) return absl::OkStatus();
      const absl::Time now = absl::Now();
      const comm::HeadSession::Welcomed w = head_->OnWelcome(envelope.welcome(), now);
      console_.out() << "the head is back" << (w.restarted ? " (restarted)" : "") << " after "
                     << FormatSeconds(now - w.lost_at) << "; submitting the " << running_.size()
                     << " unfinished trial(s) again: it "
                     << "finds those the agents still run\n"
                     << std::flush;
      Resubmit();
      return absl::OkStatus();
    }
    case comm::Envelope::kStarted: {
      auto it = running_.find(envelope.started().trial());
      if (it == running_.end()) return absl::OkStatus();
      const comm::Started& s = envelope.started();
      if (it->second.started == absl::InfinitePast()) {
        it->second.started = absl::Now();
        most_running_ = std::max(most_running_, StartedCount(running_));
      }
      it->second.placed[s.agent()].assign(s.slots().begin(), s.slots().end());
      // Journaled as the trial's user attr "placement" (Optuna shows it too).
      RETURN_IF_ERROR(engine_->SetPlacement(s.trial(), Placement(it->second.placed)));
      // Rank 0's warm worker, as the user attr "worker"; a fresh trainer ("") records none.
      const std::string worker = RankZeroWorker(s);
      if (!worker.empty()) return engine_->SetWorker(s.trial(), worker);
      return absl::OkStatus();
    }
    case comm::Envelope::kTelemetry: {
      auto it = running_.find(envelope.telemetry().trial());
      if (it != running_.end()) {
        it->second.gpu_usage[envelope.telemetry().agent()] = envelope.telemetry().usage();
      }
      return absl::OkStatus();
    }
    case comm::Envelope::kReport:
      return HandleReport(envelope.report());
    case comm::Envelope::kExit:
      return HandleExit(envelope.exit());
    case comm::Envelope::kRefused:
      if (head_->Classify(envelope.refused()) == comm::HeadSession::Refusal::kHeadRestarted &&
          options_.head_grace > absl::ZeroDuration()) {
        if (!head_->lost()) {
          LoseHead(absl::StrCat("the head at ", options_.head, " restarted"));
          head_->Register(absl::Now());
        }
        return absl::OkStatus();
      }
      if (head_->Classify(envelope.refused()) == comm::HeadSession::Refusal::kUnknownToHead &&
          options_.head_grace > absl::ZeroDuration() && !head_->session().empty()) {
        // The head dropped this sweep (its heartbeats came late, e.g. on a starved host) and
        // keeps its running trials for a while: register again and claim them. The messages
        // sent before that Register are each refused too: while registering again, ignore
        // them (the head answers a Register with a Welcome or another reason, never this one).
        if (head_->welcomed()) {
          LoseHead(absl::StrCat("the head at ", options_.head,
                                " dropped this sweep (no heartbeat reached it in time)"));
          head_->Register(absl::Now());
        }
        return absl::OkStatus();
      }
      return absl::PermissionDeniedError(
          absl::StrCat("the head refused this sweep: ", envelope.refused().reason()));
    case comm::Envelope::kShutdown:
      return absl::UnavailableError(
          absl::StrCat("the head shut down: ", envelope.shutdown().reason()));
    default:
      TF_LOG(WARNING) << "unexpected " << comm::BodyName(envelope) << " from the head";
      return absl::OkStatus();
  }
}

void SweepDriver::Interrupt() {
  interrupting_ = true;
  if (head_->lost()) {
    // Nobody to stop the trials through: a head that comes back cancels them when no client
    // claims them (Head::Options::orphan_grace).
    interrupt_deadline_ = absl::Now();
    console_.out() << "\ninterrupted while the head is lost: leaving its " << running_.size()
                   << " trial(s) to the agents\n"
                   << std::flush;
    return;
  }
  interrupt_deadline_ = absl::Now() + absl::Seconds(15);
  console_.out() << "\ninterrupted: stopping " << running_.size() << " running trial(s)...\n"
                 << std::flush;
  for (const auto& [number, run] : running_) Send(CancelFor(number, "the sweep was interrupted"));
}

SweepProgress SweepDriver::Progress() const {
  return ProgressOf(*engine_, config_, running_, trial_durations_, most_running_, start_,
                    absl::Now());
}

std::string SweepDriver::Summary() const {
  if (engine_ == nullptr) return "";
  std::string out = table_.Summary(engine_->study(), Progress(), config_.journal);
  for (const std::string& line : bound_lines_) absl::StrAppend(&out, line, "\n");
  return out;
}

absl::Status SweepDriver::WriteReport() const {
  if (options_.report_json.empty()) return absl::OkStatus();
  return WriteFileAtomically(options_.report_json, StudyToJson(engine_->study(), engine_->space(),
                                                               engine_->recorded_attrs()));
}

absl::Status SweepDriver::Run() {
  start_ = absl::Now();
  RETURN_IF_ERROR(OpenJournal());
  html_report_ = std::make_unique<ReportWriter>(config_.journal, ReportPathFor(config_.journal),
                                                options_.report_interval);
  RETURN_IF_ERROR(Connect());
  return Finish(Loop());
}

absl::Status SweepDriver::Loop() {
  while (true) {
    if (!interrupting_ && !head_->lost()) RETURN_IF_ERROR(Fill());
    if (running_.empty()) {
      if (interrupting_ || engine_->Done()) return absl::OkStatus();
      if (engine_->Stuck()) {
        return absl::InternalError("the sampler waits for trials but none is running");
      }
    }
    zmq::pollitem_t items[] = {{static_cast<void*>(head_->socket()), 0, ZMQ_POLLIN, 0},
                               {nullptr, signals_->fd(), ZMQ_POLLIN, 0}};
    zmq::poll(items, 2, std::chrono::milliseconds(100));
    const std::vector<int> signals = signals_->Read();
    if (!signals.empty()) {
      if (interrupting_) return absl::OkStatus();  // a second Ctrl-C: stop waiting
      Interrupt();
      if (head_->lost()) return absl::OkStatus();
    }
    RETURN_IF_ERROR(ReceiveMessages());
    const absl::Time now = absl::Now();
    RETURN_IF_ERROR(Tend(now));
    if (interrupting_ && now > interrupt_deadline_) return absl::OkStatus();
    html_report_->Tick(now, [this] { return engine_->Snapshot(); });
    console_.Show(false);
  }
}

absl::Status SweepDriver::ReceiveMessages() {
  // At most so many messages a turn: a burst of trial ends must not keep the loop from
  // answering the head's heartbeats (Tend) for longer than the head's patience.
  constexpr int kMessagesPerTurn = 256;
  for (int m = 0; m < kMessagesPerTurn; ++m) {
    auto received = head_->Receive(absl::Now());
    if (!received) break;
    if (!received->envelope.ok()) {
      TF_LOG(WARNING) << "dropped a frame from the head: " << received->envelope.status().message();
      continue;
    }
    RETURN_IF_ERROR(HandleMessage(*received->envelope));
  }
  return absl::OkStatus();
}

absl::Status SweepDriver::Tend(absl::Time now) {
  // A head lost with no grace, or while the trials are being stopped: fail at once.
  const comm::HeadSession::Tick tick =
      head_->Poll(now, options_.head_grace <= absl::ZeroDuration() || interrupting_
                           ? comm::HeadSession::Mode::kFailFast
                           : comm::HeadSession::Mode::kWait);
  if (!tick.lost.empty() && head_->lost()) AnnounceHeadLost(tick.lost);
  RETURN_IF_ERROR(tick.status);
  if (options_.health_check && now - last_health_check_ > absl::Milliseconds(500)) {
    last_health_check_ = now;
    RETURN_IF_ERROR(options_.health_check());
  }
  return absl::OkStatus();
}

absl::Status SweepDriver::Finish(const absl::Status& failure) {
  running_.clear();
  absl::Status cleanup = engine_->InterruptRunning(
      failure.ok() ? "interrupted" : absl::StrCat("interrupted: ", failure.message()));
  if (cleanup.ok()) {
    absl::StatusOr<std::vector<std::string>> bounds = engine_->RecordBounds();
    if (bounds.ok()) {
      bound_lines_ = std::move(*bounds);
    } else {
      cleanup = bounds.status();
    }
  }
  console_.Show(true);
  absl::Status report = WriteReport();
  (void)html_report_->Flush(engine_->Snapshot());  // a failure was logged; the sweep stands
  if (!failure.ok()) return failure;
  if (!cleanup.ok()) return cleanup;
  if (!report.ok()) return report;
  if (interrupting_) return absl::CancelledError("interrupted");
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
