#include "hpo/report/progress_table.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace hpo {
namespace {

TEST(PlacementTest, RangesAndAgents) {
  EXPECT_EQ(Placement({}), "");
  EXPECT_EQ(Placement({{"local", {3}}}), "local:3");
  EXPECT_EQ(Placement({{"local", {2, 0, 3, 1}}}), "local:0-3");
  EXPECT_EQ(Placement({{"local", {0, 1}}}), "local:0,1");
  EXPECT_EQ(Placement({{"local", {0, 1, 2, 5, 7, 8}}}), "local:0-2,5,7,8");
  EXPECT_EQ(Placement({{"node-b", {6, 7}}, {"node-a", {0, 1}}}), "node-a:0,1 node-b:6,7");
}

class ProgressTableTest : public ::testing::Test {
 protected:
  ProgressTableTest() : table_(Config()) {}
  static SweepConfig Config() {
    SweepConfig c;
    c.metric_name = "eval/spearman";
    return c;
  }
  static Trial MakeTrial(int64_t number, TrialState state) {
    Trial t;
    t.number = number;
    t.state = state;
    t.params = {{"lr", 1e-4}, {"batch_size", 32}};
    t.lr_effective = 1e-4;
    t.phase = "random";
    return t;
  }
  ProgressTable table_;
};

TEST_F(ProgressTableTest, EventLineSaysWhereTheTrialRan) {
  Trial t = MakeTrial(7, TrialState::kComplete);
  t.value = 0.8;
  t.placement = "local:4-7";
  EXPECT_EQ(table_.EventLine(t),
            "trial 7 COMPLETE  lr=1.000e-04 lr_eff=1.000e-04 batch=32  eval/spearman=0.8000  "
            "on local:4-7\n");
  t.placement.clear();
  EXPECT_EQ(table_.EventLine(t),
            "trial 7 COMPLETE  lr=1.000e-04 lr_eff=1.000e-04 batch=32  "
            "eval/spearman=0.8000\n");
  Trial failed = MakeTrial(8, TrialState::kFail);
  failed.fail_reason = "exit code 1";
  failed.placement = "local:0";
  EXPECT_EQ(table_.EventLine(failed),
            "trial 8 FAIL  lr=1.000e-04 lr_eff=1.000e-04 batch=32  on local:0  exit code 1\n");
}

// The line a pipe gets as each trial ends says how long it ran, before where.
TEST_F(ProgressTableTest, EventLineSaysHowLongTheTrialRan) {
  Trial t = MakeTrial(3, TrialState::kComplete);
  t.value = 0.8123;
  t.placement = "local:0";
  EXPECT_EQ(table_.EventLine(t, absl::Milliseconds(41234)),
            "trial 3 COMPLETE  lr=1.000e-04 lr_eff=1.000e-04 batch=32  eval/spearman=0.8123  "
            "41.2 s  on local:0\n");
  Trial pruned = MakeTrial(4, TrialState::kPruned);
  pruned.intermediate_values = {{640, 0.5}};
  EXPECT_EQ(table_.EventLine(pruned, absl::Seconds(12)),
            "trial 4 PRUNED  lr=1.000e-04 lr_eff=1.000e-04 batch=32  at 640 samples "
            "(eval/spearman=0.5000)  12.0 s\n");
}

TEST_F(ProgressTableTest, RunningRowsShowTheirGpus) {
  Study study;
  study.trials = {MakeTrial(0, TrialState::kRunning), MakeTrial(1, TrialState::kRunning),
                  MakeTrial(2, TrialState::kComplete)};
  study.trials[0].placement = "local:0-3";
  study.trials[2].value = 0.5;
  study.trials[2].placement = "node-a:6,7";
  SweepProgress p;
  p.where = {{0, "running"}, {1, "queued"}};
  const std::string out = table_.Render(study, p, 10);
  EXPECT_NE(out.find("RUNNING"), std::string::npos) << out;
  EXPECT_NE(out.find("local:0-3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("QUEUED"), std::string::npos) << out;
  EXPECT_EQ(out.find("queued"), std::string::npos) << out;
  EXPECT_NE(out.find("  on\n"), std::string::npos) << out;        // the column's header
  EXPECT_NE(out.find("node-a:6,7\n"), std::string::npos) << out;  // a finished trial's
}

// A resumed journal whose torn tail lost results can leave the plan as known now smaller than
// the points the study holds: the header never says "4/2 points done".
TEST_F(ProgressTableTest, ThePlannedCountIsNeverBelowThePointsDone) {
  Study study;
  for (int64_t i = 0; i < 4; ++i) {
    study.trials.push_back(MakeTrial(i, TrialState::kComplete));
    study.trials.back().value = 0.1 * static_cast<double>(i);
    study.trials.back().point = i;
  }
  SweepProgress p;
  p.planned = 2;
  p.planned_exact = true;
  EXPECT_NE(table_.Header(study, p).find(" 4/4 points done (4 complete, 0 pruned)"),
            std::string::npos)
      << table_.Header(study, p);
  // A point taken but not done (running, or failed and retried) counts as planned too.
  study.trials.push_back(MakeTrial(4, TrialState::kRunning));
  study.trials.back().point = 4;
  EXPECT_NE(table_.Header(study, p).find(" 4/5 points done"), std::string::npos)
      << table_.Header(study, p);
  EXPECT_NE(table_.Summary(study, p, "j.log").find(" 4/5 points done"), std::string::npos);
  // Its last line names the command that shows the journal, as the user runs hpo.
  const std::string summary = table_.Summary(study, p, "my runs/j.log", "bazel run //hpo --");
  EXPECT_EQ(summary.substr(summary.rfind("journal: ")),
            "journal: my runs/j.log  (bazel run //hpo -- status --journal 'my runs/j.log')\n");
  // A larger plan is kept.
  p.planned = 32;
  p.planned_exact = false;
  EXPECT_NE(table_.Header(study, p).find(" 4/<=32 points done"), std::string::npos);
}

TEST_F(ProgressTableTest, GpuTelemetryInLinesAndRows) {
  Trial t = MakeTrial(7, TrialState::kComplete);
  t.value = 0.8;
  t.placement = "local:1";
  t.gpu_util_mean = 86.6;
  t.gpu_mem_peak_mib = 12595.2;  // 12.3 GiB
  t.gpu_energy_j = 4540;
  EXPECT_EQ(table_.EventLine(t),
            "trial 7 COMPLETE  lr=1.000e-04 lr_eff=1.000e-04 batch=32  eval/spearman=0.8000  "
            "gpu 87% 12.3 GiB 4.5 kJ  on local:1\n");
  Study study;
  study.trials = {MakeTrial(0, TrialState::kRunning), MakeTrial(1, TrialState::kRunning), t};
  study.trials[0].placement = "local:0";
  SweepProgress p;
  p.where = {{0, "running"}, {1, "queued"}};
  p.gpu_util = {{0, 41.4}};
  const std::string out = table_.Render(study, p, 10);
  EXPECT_NE(out.find("local:0  gpu 41%\n"), std::string::npos) << out;       // running: now
  EXPECT_NE(out.find("local:1  gpu 87% mean\n"), std::string::npos) << out;  // finished: mean
  const size_t queued = out.find("QUEUED");
  ASSERT_NE(queued, std::string::npos) << out;
  const std::string queued_row = out.substr(queued, out.find('\n', queued) - queued);
  EXPECT_EQ(queued_row.find("gpu"), std::string::npos) << queued_row;  // none for a queued one
}

TEST(EstimateRemainingTest, PointsNotStartedAtTheMeanRunningOnesByTheTrialsThatRanLonger) {
  EXPECT_FALSE(EstimateRemaining({}, {absl::Seconds(5)}, 10, 2).has_value());
  // Finished: 8 s and 12 s (mean 10 s). Running for 4 s: both ran longer, 10 - 4 = 6 s left.
  // Running for 9 s: only the 12 s one ran longer, 3 s left. Running for 15 s: none ran
  // longer, 0. Three points not started: 10 s each. Two at a time.
  const auto eta = EstimateRemaining({absl::Seconds(8), absl::Seconds(12)},
                                     {absl::Seconds(4), absl::Seconds(9), absl::Seconds(15)}, 3, 2);
  ASSERT_TRUE(eta.has_value());
  EXPECT_EQ(*eta, absl::Seconds((6 + 3 + 0 + 3 * 10) / 2.0));
  EXPECT_EQ(*EstimateRemaining({absl::Seconds(10)}, {}, 4, 0), absl::Seconds(40));  // parallel >= 1
  // Many slots, one trial left: its own length, not a share of it.
  EXPECT_EQ(*EstimateRemaining({absl::Seconds(10)}, {}, 1, 8), absl::Seconds(10));
  EXPECT_EQ(*EstimateRemaining({absl::Seconds(10)}, {absl::Seconds(4)}, 0, 8), absl::Seconds(6));
  EXPECT_EQ(*EstimateRemaining({absl::Seconds(10)}, {}, -3, 1), absl::ZeroDuration());
}

TEST_F(ProgressTableTest, HeaderShowsTheEtaUntilTheEnd) {
  Study study;
  study.trials = {MakeTrial(0, TrialState::kComplete), MakeTrial(1, TrialState::kRunning)};
  study.trials[0].value = 0.5;
  study.trials[0].point = 0;
  study.trials[1].point = 1;
  SweepProgress p;
  p.planned = 4;
  p.planned_exact = true;
  p.eta = absl::Seconds(125);
  EXPECT_NE(table_.Header(study, p).find("  eta 00:02:05\n"), std::string::npos)
      << table_.Header(study, p);
  p.planned_exact = false;  // the grid is not known yet: an upper bound
  EXPECT_NE(table_.Header(study, p).find("  eta <=00:02:05\n"), std::string::npos);
  p.eta.reset();
  EXPECT_EQ(table_.Header(study, p).find("eta"), std::string::npos);
  // Everything done: no ETA.
  study.trials[1].state = TrialState::kComplete;
  study.trials[1].value = 0.6;
  p.planned = 2;
  p.planned_exact = true;
  p.eta = absl::ZeroDuration();
  EXPECT_EQ(table_.Header(study, p).find("eta"), std::string::npos) << table_.Header(study, p);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
