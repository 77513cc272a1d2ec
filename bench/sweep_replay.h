// Replays a sweep against a table of recorded learning curves (bench/search_table.h), in
// simulated time, to measure how much compute a search method spends to find a good point.
//
// A Policy is the search: which point to train next, whether a report should stop its trial.
// TunefleetPolicy is tunefleet's own sweep: hpo's SweepEngine, the object `hpo sweep` runs,
// with its real sampler and pruner (hpo/sweep_engine.h), not a re-implementation.
// bench/optuna_policy.h puts Optuna's samplers and pruners behind the same interface.
//
// The replay: up to `max_concurrent_trials` trials run at once, each training one sample per
// unit of simulated time, so a trial's clock is the samples it has seen. A trial reports at
// its evaluation points, `evals_per_epoch` an epoch at round(j * N / evals_per_epoch) samples
// (N: the table's epoch), the last one being its final value; each report's value comes from
// the table. A stopped trial has trained up to its last report. Events at the same time are
// handled in trial order. The compute at any time is the samples trained by all trials so far.
//
// Thread-safety: a replay and its policy are used from one thread.
#ifndef TUNEFLEET_BENCH_SWEEP_REPLAY_H_
#define TUNEFLEET_BENCH_SWEEP_REPLAY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/search_table.h"
#include "hpo/config/sweep_config.h"
#include "hpo/sweep_engine.h"

namespace tunefleet {
namespace bench {

class Policy {
 public:
  virtual ~Policy() = default;
  struct Started {
    int64_t trial = 0;
    Params params;
  };
  // The next trial to start now, or nullopt when none can start now.
  virtual absl::StatusOr<std::optional<Started>> Start() = 0;
  // A report of a running trial; true: stop it. `final`: its last report (never stopped).
  virtual absl::StatusOr<bool> Report(int64_t trial, int64_t samples, double value, bool final) = 0;
  // The trial ended: completed (after its final report) or stopped.
  virtual absl::Status End(int64_t trial, bool completed) = 0;
  // Nothing more to start, ever (the replay ends when nothing runs either).
  virtual bool Exhausted() = 0;
};

// tunefleet's sweep: a SweepEngine over `config`, without a journal.
class TunefleetPolicy : public Policy {
 public:
  explicit TunefleetPolicy(const hpo::SweepConfig& config) : engine_(config, nullptr) {}
  absl::StatusOr<std::optional<Started>> Start() override;
  absl::StatusOr<bool> Report(int64_t trial, int64_t samples, double value, bool final) override;
  absl::Status End(int64_t trial, bool completed) override;
  bool Exhausted() override { return engine_.Done() || engine_.Stuck(); }
  const hpo::SweepEngine& engine() const { return engine_; }

 private:
  hpo::SweepEngine engine_;
};

struct ReplayOptions {
  int64_t max_concurrent_trials = 1;
  int64_t evals_per_epoch = 8;
  // The replay stops when this much compute is spent (0: when the policy is exhausted); what
  // would complete after that does not count.
  int64_t compute_limit = 0;
};

// What a replay found: after each completed trial, the compute spent so far and the best final
// value so far.
struct ReplayTrace {
  struct Completion {
    int64_t compute = 0;
    double best = 0;
  };
  std::vector<Completion> completions;
  int64_t compute = 0;  // spent in all
  int64_t trials = 0;   // started
  int64_t pruned = 0;

  // The compute spent when the best so far first came within `eps` of `target` (by the goal);
  // nullopt if never.
  std::optional<int64_t> ComputeToWithin(double target, double eps, bool maximize) const;
  // The best final value found with at most `compute` spent; nullopt if none completed by then.
  std::optional<double> BestAt(int64_t compute) const;
};

absl::StatusOr<ReplayTrace> Replay(const SearchTable& table, Policy& policy,
                                   const ReplayOptions& options);

// The evaluation points of a trial that trains `total` samples, `evals_per_epoch` an epoch of
// `epoch` samples: round(j * epoch / evals_per_epoch) up to total, and total itself.
std::vector<int64_t> EvaluationPoints(int64_t total, int64_t epoch, int64_t evals_per_epoch);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_SWEEP_REPLAY_H_
