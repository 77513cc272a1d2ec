// The replay's clock and accounting (trials in parallel, each at one sample per unit of time,
// stopped trials counted up to their stop), and tunefleet's sweep engine replayed on a table.
#include "bench/sweep_replay.h"

#include <cstdio>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"
#include "tests/bench/table_fixture.h"

namespace tunefleet {
namespace bench {
namespace {

// Starts the given points in order; stops trial `stop` at its first report.
class ScriptedPolicy : public Policy {
 public:
  ScriptedPolicy(std::deque<Params> points, int64_t stop)
      : points_(std::move(points)), stop_(stop) {}
  absl::StatusOr<std::optional<Started>> Start() override {
    if (points_.empty()) return std::optional<Started>();
    Started s{next_++, points_.front()};
    points_.pop_front();
    return std::optional<Started>(s);
  }
  absl::StatusOr<bool> Report(int64_t trial, int64_t samples, double value, bool final) override {
    reports.push_back({trial, samples});
    return trial == stop_ && !final;
  }
  absl::Status End(int64_t trial, bool completed) override {
    ends.push_back({trial, completed});
    return absl::OkStatus();
  }
  bool Exhausted() override { return points_.empty(); }
  std::vector<std::pair<int64_t, int64_t>> reports;
  std::vector<std::pair<int64_t, bool>> ends;

 private:
  std::deque<Params> points_;
  int64_t stop_;
  int64_t next_ = 0;
};

TEST(SweepReplayTest, ClockAndCompute) {
  auto table = SearchTable::Load(WriteGridJournal("replay_clock.log"), TableOptions());
  ASSERT_TRUE(table.ok()) << table.status();
  ScriptedPolicy policy({{{"lr", 1e-4}, {"batch_size", 16}},
                         {{"lr", 1e-3}, {"batch_size", 16}},
                         {{"lr", 1e-2}, {"batch_size", 64}}},
                        /*stop=*/1);
  ReplayOptions o;
  o.max_concurrent_trials = 2;
  o.evals_per_epoch = 4;
  auto trace = Replay(*table, policy, o);
  ASSERT_TRUE(trace.ok()) << trace.status();
  // t=200: trial 0 reports, then trial 1 (stopped: 200 samples); trial 2 starts at 200.
  ASSERT_GE(policy.reports.size(), 2u);
  using Report = std::pair<int64_t, int64_t>;
  using End = std::pair<int64_t, bool>;
  EXPECT_EQ(policy.reports[0], Report(0, 200));
  EXPECT_EQ(policy.reports[1], Report(1, 200));
  EXPECT_EQ(policy.ends[0], End(1, false));
  // Trial 0 completes at t=800 (compute 200 + 800 + 600), trial 2 at t=1000 (200+800+800).
  ASSERT_EQ(trace->completions.size(), 2u);
  EXPECT_EQ(trace->completions[0].compute, 1600);
  EXPECT_DOUBLE_EQ(trace->completions[0].best, 800 / 8000.0 + 0.016);
  EXPECT_EQ(trace->completions[1].compute, 1800);
  EXPECT_DOUBLE_EQ(trace->completions[1].best, 3 * 800 / 8000.0 + 0.064);
  EXPECT_EQ(trace->compute, 1800);
  EXPECT_EQ(trace->trials, 3);
  EXPECT_EQ(trace->pruned, 1);
  EXPECT_EQ(trace->ComputeToWithin(0.3 + 0.064, 0.0, true), std::optional<int64_t>(1800));
  EXPECT_EQ(trace->ComputeToWithin(0.3 + 0.064, 0.3, true), std::optional<int64_t>(1600));
  EXPECT_EQ(trace->BestAt(1700), std::optional<double>(800 / 8000.0 + 0.016));
  EXPECT_EQ(trace->BestAt(1000), std::nullopt);
}

TEST(SweepReplayTest, ComputeLimitStopsStartingTrials) {
  auto table = SearchTable::Load(WriteGridJournal("replay_limit.log"), TableOptions());
  ASSERT_TRUE(table.ok());
  std::deque<Params> many(10, Params{{"lr", 1e-3}, {"batch_size", 64}});
  ScriptedPolicy policy(many, -1);
  ReplayOptions o;
  o.max_concurrent_trials = 1;
  o.evals_per_epoch = 4;
  o.compute_limit = 2000;  // two and a half trials
  auto trace = Replay(*table, policy, o);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->completions.size(), 2u);
  EXPECT_EQ(trace->trials, 3);
  EXPECT_EQ(trace->compute, 2000);
}

TEST(SweepReplayTest, TunefleetsGridReplaysTheTableInOrder) {
  auto table = SearchTable::Load(WriteGridJournal("replay_grid.log"), TableOptions());
  ASSERT_TRUE(table.ok());
  auto file = ConfigFile::Parse(
      "name: g\nmetric: {name: m}\ntrainer: {synthetic: {steps: 4, samples_per_step: 200}}\n"
      "parameters:\n  lr: {distribution: log_uniform, min: 1.0e-4, max: 1.0e-2}\n"
      "  batch_size: {values: [16, 64]}\n"
      "search: {method: grid, grid: {lr_points: 3}}\n"
      "early_terminate: {type: median, n_startup_trials: 1}\n",
      "g.yaml");
  auto config = hpo::ParseSweepConfig(*file);
  ASSERT_TRUE(config.ok()) << config.status();
  TunefleetPolicy policy(*config);
  ReplayOptions o;
  o.evals_per_epoch = 4;
  auto trace = Replay(*table, policy, o);
  ASSERT_TRUE(trace.ok()) << trace.status();
  // One at a time in grid order (lr-major); each point is better than the median of those
  // before it at every report, so the median pruner stops none.
  const hpo::Study& study = policy.engine().study();
  ASSERT_EQ(study.trials.size(), 6u);
  EXPECT_EQ(study.trials[0].params.at("lr"), 1e-4);
  EXPECT_EQ(study.trials[5].params.at("lr"), 1e-2);
  EXPECT_EQ(study.trials[5].params.at("batch_size"), 64);
  for (const hpo::Trial& t : study.trials) {
    EXPECT_EQ(t.state, hpo::TrialState::kComplete) << t.number;  // each beats the median so far
    EXPECT_EQ(t.intermediate_values.rbegin()->first, 800);
  }
  EXPECT_EQ(trace->ComputeToWithin(table->best(), 0, true), std::optional<int64_t>(6 * 800));
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet
