#include "hpo/pruners/median_pruner.h"

#include <cmath>
#include <limits>
#include <map>

#include "gtest/gtest.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

MedianSpec Spec(int64_t n_startup_trials, int64_t n_warmup_steps = 0, int64_t interval_steps = 1,
                int64_t n_min_trials = 1) {
  return {n_startup_trials, n_warmup_steps, interval_steps, n_min_trials};
}

// AddTrial, with an objective value for a COMPLETE trial; returns its index.
size_t Add(Study* study, TrialState state, std::map<int64_t, double> values) {
  const size_t i = AddTrial(study, state, std::move(values));
  if (state == TrialState::kComplete) study->trials[i].value = 0;
  return i;
}

Study Minimize() {
  Study s;
  s.maximize = false;
  return s;
}

// Three COMPLETE trials with values 1, 2, 3 at steps 0..9 (median 2).
Study WithCompleted(bool maximize) {
  Study s;
  s.maximize = maximize;
  for (double v : {1.0, 2.0, 3.0}) {
    std::map<int64_t, double> values;
    for (int64_t step = 0; step < 10; ++step) values[step] = v;
    Add(&s, TrialState::kComplete, values);
  }
  return s;
}

TEST(NanPercentileTest, MatchesNumpy) {
  EXPECT_EQ(NanPercentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_EQ(NanPercentile({5}, 50), 5);
  EXPECT_EQ(NanPercentile({kNaN, 3, 1}, 50), 2);
  EXPECT_TRUE(std::isnan(NanPercentile({}, 50)));
  EXPECT_TRUE(std::isnan(NanPercentile({kNaN, kNaN}, 50)));
  // numpy interpolates from the upper neighbour when gamma >= 0.5: b - (b - a) * 0.5, one ulp
  // away from a + (b - a) * 0.5 here.
  EXPECT_EQ(NanPercentile({0.2, 0.939}, 50), 0x1.2395810624dd3p-1);
  // Infinities: inf - inf and inf * 0 are NaN in numpy's arithmetic too.
  EXPECT_TRUE(std::isnan(NanPercentile({kInf}, 50)));
  EXPECT_TRUE(std::isnan(NanPercentile({1, kInf}, 50)));
  EXPECT_TRUE(std::isnan(NanPercentile({1, 2, kInf}, 50)));
  EXPECT_EQ(NanPercentile({-kInf, 1}, 50), -kInf);
}

TEST(MedianPrunerTest, NoCompletedTrialNeverPrunes) {
  Study s = Minimize();
  Add(&s, TrialState::kPruned, {{0, 0.0}});
  Add(&s, TrialState::kFail, {{0, 0.0}});
  const size_t i = Add(&s, TrialState::kRunning, {{0, 100.0}});
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
}

TEST(MedianPrunerTest, WaitsForStartupTrials) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {{0, 100.0}});
  EXPECT_FALSE(MedianPruner(Spec(4)).Prune(&s, i));
  EXPECT_TRUE(MedianPruner(Spec(3)).Prune(&s, i));
}

TEST(MedianPrunerTest, OnlyCompleteTrialsCount) {
  Study s = Minimize();
  Add(&s, TrialState::kComplete, {{0, 10.0}});
  for (TrialState state : {TrialState::kPruned, TrialState::kFail, TrialState::kRunning}) {
    Add(&s, state, {{0, 0.0}});
  }
  const size_t i = Add(&s, TrialState::kRunning, {{0, 5.0}});
  EXPECT_FALSE(MedianPruner(Spec(2)).Prune(&s, i));  // one COMPLETE trial: still starting up
  EXPECT_FALSE(MedianPruner(Spec(1)).Prune(&s, i));  // 5 is better than the COMPLETE 10
}

TEST(MedianPrunerTest, NoPruningDuringWarmup) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {{0, 100.0}, {1, 100.0}});
  EXPECT_FALSE(MedianPruner(Spec(0, 2)).Prune(&s, i));
  s.trials[i].intermediate_values[2] = 100.0;
  EXPECT_TRUE(MedianPruner(Spec(0, 2)).Prune(&s, i));
}

TEST(MedianPrunerTest, ChecksOnlyTheFirstReportOfEachInterval) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {});
  MedianPruner pruner(Spec(0, 1, 3));  // intervals [1, 4), [4, 7), ...
  auto report = [&](int64_t step) {
    s.trials[i].intermediate_values[step] = 100.0;
    return pruner.Prune(&s, i);
  };
  EXPECT_FALSE(report(0));  // warmup
  EXPECT_TRUE(report(1));
  EXPECT_FALSE(report(2));
  EXPECT_FALSE(report(3));
  EXPECT_TRUE(report(5));  // first report in [4, 7), though not at 4
  EXPECT_FALSE(report(6));
}

TEST(MedianPrunerTest, JudgesTheLargestStepNotTheLatestReport) {
  Study s = Minimize();
  for (int k = 0; k < 3; ++k) Add(&s, TrialState::kComplete, {{2, 100.0}, {6, 1.0}, {7, 1.0}});
  const size_t i = Add(&s, TrialState::kRunning, {{6, 50.0}});
  MedianPruner pruner(Spec(0, 0, 5));         // intervals [0, 5), [5, 10), ...
  s.trials[i].intermediate_values[2] = 50.0;  // reported after step 6: step 6 is still judged,
  EXPECT_TRUE(pruner.Prune(&s, i));           // against the median 1 at step 6
  s.trials[i].intermediate_values[7] = 50.0;
  s.trials[i].intermediate_values.erase(6);
  s.trials[i].intermediate_values[5] = 50.0;  // reported after 7, yet in 7's interval
  EXPECT_FALSE(pruner.Prune(&s, i));
}

TEST(MedianPrunerTest, ComparesTheTrialsBestValueWithTheMedianAtThisStep) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {{0, 1.5}, {1, 9.0}});
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));  // best 1.5 beats the median 2
  s.trials[i].intermediate_values = {{0, 2.0}, {1, 9.0}};
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));  // a tie is not worse
  s.trials[i].intermediate_values = {{0, 2.5}, {1, 9.0}};
  EXPECT_TRUE(MedianPruner(Spec(0)).Prune(&s, i));
}

TEST(MedianPrunerTest, MaximizeFlipsTheComparison) {
  Study s = WithCompleted(true);
  const size_t i = Add(&s, TrialState::kRunning, {{0, 1.5}});
  EXPECT_TRUE(MedianPruner(Spec(0)).Prune(&s, i));
  s.trials[i].intermediate_values = {{0, 2.0}};
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
  s.trials[i].intermediate_values = {{0, 0.5}, {1, 2.5}};  // best over steps is 2.5
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
}

TEST(MedianPrunerTest, InterpolatesTheMedian) {
  Study s = Minimize();
  for (double v : {1.0, 2.0, 3.0, 4.0}) Add(&s, TrialState::kComplete, {{0, v}});
  const size_t i = Add(&s, TrialState::kRunning, {{0, 2.5}});
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
  s.trials[i].intermediate_values[0] = 2.6;
  EXPECT_TRUE(MedianPruner(Spec(0)).Prune(&s, i));
}

TEST(MedianPrunerTest, NeedsNMinTrialsReportsAtThisStepCountingNaNs) {
  Study s = Minimize();
  Add(&s, TrialState::kComplete, {{0, 1.0}, {1, 1.0}});
  Add(&s, TrialState::kComplete, {{0, 1.0}, {1, kNaN}});
  Add(&s, TrialState::kComplete, {{0, 1.0}});  // nothing at step 1
  const size_t i = Add(&s, TrialState::kRunning, {{1, 5.0}});
  EXPECT_TRUE(MedianPruner(Spec(0, 0, 1, 2)).Prune(&s, i));  // [1, NaN]: 2 reports, median 1
  EXPECT_FALSE(MedianPruner(Spec(0, 0, 1, 3)).Prune(&s, i));
}

TEST(MedianPrunerTest, NoReportsAtThisStepOrAllNaNNeverPrunes) {
  Study s = Minimize();
  Add(&s, TrialState::kComplete, {{0, 1.0}, {1, kNaN}});
  Add(&s, TrialState::kComplete, {{0, 1.0}, {1, kNaN}});
  size_t i = Add(&s, TrialState::kRunning, {{1, 5.0}});
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));  // all NaN at step 1
  s.trials[i].intermediate_values = {{2, 5.0}};
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));  // nothing at step 2
}

TEST(MedianPrunerTest, TrialWithOnlyNaNsIsPruned) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {{0, kNaN}, {20, kNaN}});
  // Even where no COMPLETE trial reported (step 20) ...
  EXPECT_TRUE(MedianPruner(Spec(0)).Prune(&s, i));
  // ... but one real value is its best.
  s.trials[i].intermediate_values[0] = 0.5;
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
}

TEST(MedianPrunerTest, NoReportNeverPrunes) {
  Study s = WithCompleted(false);
  const size_t i = Add(&s, TrialState::kRunning, {});
  EXPECT_FALSE(MedianPruner(Spec(0)).Prune(&s, i));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
