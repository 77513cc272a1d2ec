// The sweep loop of `hpo sweep`: samples trials (random, then grid), submits them to the head,
// answers every intermediate report with a pruning decision, records everything in the
// Optuna-format journal, retries failed trials, and shows progress.
//
// Guarantees: every state change is in the journal before the next message is handled (one
// write(2) per operation, fsync when a trial finishes), so a crash loses at most the trials then
// running; --resume marks those FAIL "interrupted" and runs their points again, and never reruns
// a point that finished. A failed trial is retried as a new trial with the same params (Optuna's
// RetryFailedTrialCallback links), up to max_failures_per_trial retries per point.
// Thread-safety: single-threaded poll loop.
#ifndef TUNEFLEET_HPO_SWEEP_DRIVER_H_
#define TUNEFLEET_HPO_SWEEP_DRIVER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/liveness.h"
#include "comm/proto/messages.pb.h"
#include "common/signals.h"
#include "hpo/journal.h"
#include "hpo/progress_table.h"
#include "hpo/pruner.h"
#include "hpo/samplers/random_then_grid_sampler.h"
#include "hpo/search_space.h"
#include "hpo/sweep_config.h"

namespace tunefleet {
namespace hpo {

class SweepDriver {
 public:
  struct Options {
    std::string head;         // the head's endpoint
    bool resume = false;      // continue the study in the journal
    bool live = false;        // redraw the table in place (a terminal)
    std::string report_json;  // write hpo's final view of the study here
    // Dev mode: whether the local head and agent still run.
    std::function<absl::Status()> health_check;
    absl::Duration connect_timeout = absl::Seconds(30);
    std::string keys_dir;  // CURVE: server.pub and client.key (comm/curve_auth.h)
    // After losing the head, wait this long for it to come back (the trials go on on the
    // agents), then submit the unfinished trials again; zero: fail at once.
    absl::Duration head_grace = absl::Minutes(5);
  };

  // `signals` watches SIGINT/SIGTERM (created before any thread).
  SweepDriver(SweepConfig config, Options options, SignalFd* signals);
  ~SweepDriver();

  // OK when the plan is done. CancelledError when interrupted (the trials then running are in
  // the journal as FAIL "interrupted"); other errors when the head is lost or refuses us.
  absl::Status Run();
  const Study& study() const { return study_; }
  std::string Summary() const;

 private:
  struct Running {
    std::map<std::string, std::vector<int32_t>> placed;  // agent -> slots, from Started
    bool stop_sent = false;
    std::optional<double> final_value;
    bool missing_metric_logged = false;
    comm::TrialSpec spec;  // as submitted, to submit again to a restarted head
  };

  absl::Status OpenJournal();
  absl::Status Connect();
  // A fresh socket to the head and a Register on it.
  absl::Status OpenSocket();
  void SendRegister();
  // The head went silent or another instance answers: keep the trials, register again.
  void LoseHead(const std::string& why);
  void Resubmit();
  absl::Status Fill();
  absl::Status CreateTrial(std::optional<int64_t> retry_of);
  absl::Status HandleMessage(const comm::Envelope& envelope);
  absl::Status HandleReport(const comm::Report& report);
  absl::Status HandleExit(const comm::Exit& exit);
  absl::Status FinishTrial(Trial& trial, TrialState state);
  absl::Status InterruptRunning(const std::string& reason);
  void SendDecision(int64_t trial, int64_t step, bool stop);
  void Send(const comm::Envelope& envelope);
  void Interrupt();
  void Show(bool force);
  SweepProgress Progress() const;
  absl::Status WriteReport() const;
  // The study's user attrs, raw JSON: "metric", "search_method".
  std::map<std::string, std::string> StudyUserAttrs() const;

  SweepConfig config_;
  Options options_;
  SignalFd* signals_;
  SearchSpace space_;
  std::string run_dir_;
  RandomThenGridSampler sampler_;
  std::unique_ptr<Pruner> pruner_;
  std::unique_ptr<JournalWriter> journal_;
  ProgressTable table_;
  Study study_;
  std::map<int64_t, Running> running_;
  std::deque<int64_t> retries_;  // failed trials whose point gets another attempt
  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> socket_;
  std::unique_ptr<comm::Liveness> head_liveness_;
  std::string session_;  // the head's, from its Welcome
  bool head_lost_ = false;
  absl::Time head_lost_at_;
  absl::Time registered_at_;
  absl::Time start_;
  absl::Time last_shown_ = absl::InfinitePast();
  absl::Time last_health_check_ = absl::InfinitePast();
  int shown_lines_ = 0;
  bool interrupting_ = false;
  absl::Time interrupt_deadline_ = absl::InfiniteFuture();
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SWEEP_DRIVER_H_
