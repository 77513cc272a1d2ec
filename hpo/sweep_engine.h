// The study's side of a sweep, with no transport: which trial runs next (a retry first, else the
// sampler's next point), what each report means (journal it, ask the pruner), how each trial
// ended (its state, a retry), and what the sweep found (the best trial, a best point on a
// bound of the range). `hpo sweep` (hpo/sweep_driver.h) drives it over ZeroMQ;
// bench/search_efficiency drives the very same object from a table of recorded learning
// curves, so the benchmark measures the sweep's own decisions.
//
// Reports are keyed by samples seen across all ranks (Report.samples), which is Optuna's
// `step` in the journal and in the pruners: trials of any batch size are compared at equal
// data. A trial's final report (its last evaluation) is recorded as an intermediate value at
// its total samples too, and the pruner sees it, so that successive halving and hyperband
// record the rungs it completed, as Optuna's replay of the journal does; its decision is moot
// (the trial has finished training) and the trial completes.
//
// Guarantees (with a journal): every state change is in the journal before the call returns
// (fsync when a trial finishes); Resume ends the trials the journal left RUNNING as FAIL
// "interrupted" and queues their points again, never a point that finished. A failed trial is
// retried as a new trial with the same params (Optuna's RetryFailedTrialCallback links), up to
// max_failures_per_trial retries per point.
//
// Thread-safety: one thread (the driver's poll loop, or the benchmark).
#ifndef TUNEFLEET_HPO_SWEEP_ENGINE_H_
#define TUNEFLEET_HPO_SWEEP_ENGINE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hpo/config/sweep_config.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/pruners/pruner.h"
#include "hpo/samplers/sampler.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// How a trial's run ended, as the head reports it.
enum class RunEnd {
  kCompleted,  // every rank exited 0
  kStopped,    // stopped by a pruning decision
  kFailed,     // a rank failed (exit code, signal, could not start)
  kRefused,    // failed where a retry cannot help: a usage error of the trainer (exit code 2),
               // a path the agent refuses (comm::Exit::TRIAL_INPUT)
  kCancelled,  // killed on request (the sweep's interruption, a shutdown)
};

class SweepEngine {
 public:
  // `journal` may be null: nothing is recorded (the benchmark's replays).
  SweepEngine(const SweepConfig& config, JournalWriter* journal);
  ~SweepEngine();

  // A new study: CREATE_STUDY and the study user attrs (StudyUserAttrs()).
  absl::Status CreateStudy();
  struct Resumed {
    int64_t interrupted = 0;  // trials the journal left RUNNING, now FAIL "interrupted"
    int64_t to_rerun = 0;     // points queued for another attempt
    // The parameters whose distribution in the journal's trials differs from this sweep's
    // search space (changed, added or removed since), sorted; empty when the space is the same.
    std::vector<std::string> changed_params;
  };
  // Continues the study in `contents` (read from this engine's journal). Its sampler plans at
  // the max_concurrent_trials the journal recorded (the climb's rounds are filled to it), while
  // the engine runs this config's.
  absl::StatusOr<Resumed> Resume(JournalContents contents);

  // Starts the next trial if one may start now: a queued retry first, else the sampler's next
  // point. The trial is created RUNNING (and journaled); its number is returned, nullopt when
  // none may start now (see Done()).
  absl::StatusOr<std::optional<int64_t>> StartTrial();
  // Starts trials (StartTrial) while fewer than max_concurrent_trials run; their numbers.
  absl::StatusOr<std::vector<int64_t>> Fill();
  // True when no trial runs, none is queued for a retry, and the sampler is exhausted.
  bool Done();
  // True when nothing runs or is queued but the sampler waits for results: a bug.
  bool Stuck();

  // A report of RUNNING trial `number`: its metric `value` after `samples` samples. Returns
  // whether it should stop now (always false for a final report, after a stop was already
  // decided, or for a trial that is not running).
  absl::StatusOr<bool> Report(int64_t number, int64_t samples, double value, bool final);

  // How a trial ended. Returns the trial as recorded (COMPLETE, PRUNED or FAIL), or nullptr for
  // a trial that is not running. A failed attempt (not an interruption) queues a retry while
  // the point has attempts left; `gave_up` tells when it had none. A refused one (kRefused) is
  // never retried in this run of the sweep (`refused`); --resume tries its point again.
  struct Ended {
    const Trial* trial = nullptr;
    bool retried = false;
    bool gave_up = false;
    bool refused = false;
  };
  absl::StatusOr<Ended> EndTrial(int64_t number, RunEnd end, const std::string& reason,
                                 const std::string& stderr_tail, bool interrupting);
  // Ends every running trial as FAIL with `reason` (the sweep stops).
  absl::Status InterruptRunning(const std::string& reason);

  // Which attempt at its point trial `number` is: 1 + the point's earlier trials that count as
  // failed attempts (CountsAsFailedAttempt: interrupted ones do not, as in Settled()).
  int64_t Attempt(int64_t number) const;
  // The line `hpo sweep` prints when retry trial `number` starts:
  // "trial 7 retries trial 3 (attempt 2 of 3)\n"; empty for a trial that retries nothing.
  std::string RetryLine(int64_t number) const;

  // What a sweep that ran to its end achieved (SweepFailure judges it).
  struct Outcome {
    int64_t points = 0;         // points taken
    int64_t completed = 0;      // COMPLETE trials
    int64_t failed_points = 0;  // points given up on: every attempt failed, none left
  };
  Outcome GetOutcome() const;

  // Records where running trial `number` runs ("local:0-3"): Trial::placement and the user
  // attr "placement"; the first time, also that its ranks started now: Trial::ranks_started and
  // the user attr "ranks_started" (a trial may wait at its agent, e.g. for GPU memory).
  absl::Status SetPlacement(int64_t number, const std::string& placement);
  // Records the warm worker that runs trial `number`'s rank 0: Trial::worker and the user attr
  // "worker" (only warm trials get one).
  absl::Status SetWorker(int64_t number, const std::string& worker);
  // Records that running trial `number` ran out of memory on a shared GPU and runs again alone:
  // Trial::requeued_alone and the user attr "requeued_alone".
  absl::Status SetRequeuedAlone(int64_t number);
  // Records trial `number`'s GPU telemetry (Trial::gpu_util_mean and the others, and their user
  // attrs); the last call before the trial ends counts.
  absl::Status SetGpuUsage(int64_t number, double util_mean, double mem_peak_mib, double energy_j);

  // The best point's parameters that lie on a bound of their range (hpo/bounds.h), as lines,
  // and records them as the study user attr "best_at_bound" ({param: "lower" | "upper"}).
  absl::StatusOr<std::vector<std::string>> RecordBounds();

  // The study user attrs (raw JSON): metric, search_method, resource ("samples"),
  // samples_per_epoch, evals_per_epoch, and the pruner's settings as resolved ("pruner").
  std::map<std::string, std::string> StudyUserAttrs() const;
  // The study user attrs as the journal holds them now (those above, or the resumed journal's,
  // and best_at_bound once recorded).
  const std::map<std::string, std::string>& recorded_attrs() const { return recorded_attrs_; }

  const Study& study() const { return study_; }
  // What ReadJournal would return for the journal now, from memory (no read): the study, its
  // user attrs and each trial's param distributions, for the report during a sweep.
  JournalContents Snapshot() const;
  const SweepConfig& config() const { return config_; }
  const SearchSpace& space() const { return space_; }
  const Sampler& sampler() const { return *sampler_; }
  // The running trials, ascending.
  std::vector<int64_t> Running() const;
  bool IsRunning(int64_t number) const { return running_.count(number) > 0; }
  // Whether a stop was decided for running trial `number`.
  bool StopDecided(int64_t number) const;
  // The best COMPLETE trial so far (by the metric's goal), or nullptr.
  const Trial* Best() const;

 private:
  struct RunState {
    bool stop_decided = false;
    std::optional<double> final_value;
  };
  absl::Status Finish(Trial& trial, TrialState state);

  SweepConfig config_;
  JournalWriter* journal_;
  SearchSpace space_;
  std::unique_ptr<Sampler> sampler_;  // of config.method (hpo/samplers/sampler_registry.h)
  std::unique_ptr<Pruner> pruner_;
  Study study_;
  std::map<int64_t, RunState> running_;
  std::deque<int64_t> retries_;       // failed trials whose point gets another attempt
  std::set<int64_t> refused_points_;  // points whose trial failed as kRefused (no retry)
  std::map<std::string, std::string> recorded_attrs_;
  std::vector<SearchSpace> distributions_;  // per trial, as CreateTrial recorded them
};

// Why a sweep that ran to its end failed, as the last line of its summary says it, or nullopt
// when it did not: no trial completed ("no trial completed"), or more than
// `max_failed_share` of its points were given up on ("5 of 8 points (62%) failed after their
// retries, more than --max_failed_share 0.5"). `hpo sweep` then exits kExitSweepFailed.
std::optional<std::string> SweepFailure(const SweepEngine::Outcome& outcome,
                                        double max_failed_share);
// `hpo sweep`'s exit code for a sweep that ran but failed (SweepFailure).
inline constexpr int kExitSweepFailed = 3;

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SWEEP_ENGINE_H_
