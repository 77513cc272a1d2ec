// The sweep loop of `hpo sweep`: the transport around hpo/sweep_engine.h. It submits the
// engine's trials to the head, answers every report with the engine's pruning decision, hands
// each trial's end to the engine (which journals it and queues retries), shows progress, and
// survives a head that restarts (it registers again and resubmits the unfinished trials).
//
// Guarantees: those of SweepEngine (every state change journaled before the next message is
// handled; a crash loses at most the trials then running; --resume reruns only their points).
// Thread-safety: single-threaded poll loop.
#ifndef TUNEFLEET_HPO_SWEEP_DRIVER_H_
#define TUNEFLEET_HPO_SWEEP_DRIVER_H_

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/head_session.h"
#include "comm/proto/messages.pb.h"
#include "common/signals.h"
#include "hpo/config/sweep_config.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/report/progress_table.h"
#include "hpo/report/report_writer.h"
#include "hpo/running_trials.h"
#include "hpo/sweep_console.h"
#include "hpo/sweep_engine.h"

namespace tunefleet {
namespace hpo {

class SweepDriver {
 public:
  struct Options {
    std::string head;                // the head's endpoint
    bool resume = false;             // continue the study in the journal
    bool live = false;               // redraw the table in place (a terminal)
    std::ostream* out = &std::cout;  // where the lines for the user go (stdout)
    std::string report_json;         // write hpo's final view of the study here
    // Dev mode: whether the local head and agent still run.
    std::function<absl::Status()> health_check;
    absl::Duration connect_timeout = absl::Seconds(30);
    std::string keys_dir;  // CURVE: server.pub and client.key (comm/curve_auth.h)
    // After losing the head, wait this long for it to come back (the trials go on on the
    // agents), then submit the unfinished trials again; zero: fail at once.
    absl::Duration head_grace = absl::Minutes(5);
    // The HTML report beside the journal is rewritten at most this often during the sweep (from
    // memory, on a thread of its own: hpo/report/report_writer.h), and once at the end.
    absl::Duration report_interval = absl::Seconds(5);
  };

  // `signals` watches SIGINT/SIGTERM (created before any thread).
  SweepDriver(SweepConfig config, Options options, SignalFd* signals);
  ~SweepDriver();

  // OK when the plan is done. CancelledError when interrupted (the trials then running are in
  // the journal as FAIL "interrupted"); other errors when the head is lost or refuses us.
  absl::Status Run();
  const Study& study() const { return engine_->study(); }
  // What the sweep achieved (SweepFailure judges it); empty before the journal is open.
  SweepEngine::Outcome Outcome() const {
    return engine_ ? engine_->GetOutcome() : SweepEngine::Outcome{};
  }
  std::string Summary() const;

 private:
  absl::Status OpenJournal();
  // Registers with the head (comm/head_session.h) and waits for its Welcome.
  absl::Status Connect();
  comm::Envelope MakeRegister() const;
  // Another head instance answers: keep the trials, register again (said once).
  void LoseHead(const std::string& why);
  void AnnounceHeadLost(const std::string& why) const;
  void Resubmit();
  absl::Status Fill();
  // Submits the engine's new trial `number` to the head.
  void Submit(int64_t number);
  absl::Status HandleMessage(const comm::Envelope& envelope);
  absl::Status HandleReport(const comm::Report& report);
  absl::Status HandleExit(const comm::Exit& exit);
  // A trial that ran out of memory sharing a GPU: submitted again with trials_per_gpu 1, as the
  // same trial (not a failed attempt).
  absl::Status RunAlone(RunningTrial& run, const comm::Exit& exit);
  void SendDecision(int64_t trial, int64_t step, bool stop);
  void Send(const comm::Envelope& envelope);
  void Interrupt();
  SweepProgress Progress() const;
  // Records the trial's GPU telemetry, all its agents together, before its end.
  absl::Status RecordGpuUsage(int64_t trial, const RunningTrial& run);
  absl::Status WriteReport() const;
  // Run's seams: the poll loop until the sweep ends (its failure, if any); the messages that
  // came; the head session and dev mode's health, every turn; the journal's last words and
  // the reports.
  absl::Status Loop();
  absl::Status ReceiveMessages();
  absl::Status Tend(absl::Time now);
  absl::Status Finish(const absl::Status& failure);

  SweepConfig config_;
  Options options_;
  SignalFd* signals_;
  std::string run_dir_;
  std::unique_ptr<JournalWriter> journal_;
  std::unique_ptr<SweepEngine> engine_;  // after journal_, which it writes to
  ProgressTable table_;
  RunningTrials running_;
  // How long the trials that ran to their end or were pruned took, from Started to Exit (ETA).
  std::vector<absl::Duration> trial_durations_;
  int most_running_ = 0;                       // the most trials seen running at once (ETA)
  std::map<int64_t, double> memory_mib_;       // TrialMemoryMib per batch size
  std::unique_ptr<ReportWriter> html_report_;  // the page beside the journal
  std::vector<std::string> bound_lines_;       // the best point's bounds, once the sweep ended
  zmq::context_t context_;
  std::unique_ptr<comm::HeadSession> head_;  // after context_, whose socket it holds
  absl::Time start_;
  absl::Time last_health_check_ = absl::InfinitePast();
  SweepConsole console_;  // after table_ and engine_, which it renders
  bool interrupting_ = false;
  absl::Time interrupt_deadline_ = absl::InfiniteFuture();
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SWEEP_DRIVER_H_
