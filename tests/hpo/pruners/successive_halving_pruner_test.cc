#include "hpo/pruners/successive_halving_pruner.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

using Attrs = std::map<std::string, double>;

SuccessiveHalvingSpec Spec(int64_t min_resource, int64_t reduction_factor,
                           int64_t min_early_stopping_rate = 0, int64_t bootstrap_count = 0) {
  return {min_resource, reduction_factor, min_early_stopping_rate, bootstrap_count};
}

Study MakeStudy(bool maximize) {
  Study s;
  s.maximize = maximize;
  return s;
}

TEST(SuccessiveHalvingPrunerTest, RungKey) { EXPECT_EQ(CompletedRungKey(3), "completed_rung_3"); }

TEST(SuccessiveHalvingPrunerTest, NothingBeforeTheFirstRungEnds) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(2, 2));
  const size_t i = AddTrial(&s, TrialState::kRunning, {});
  EXPECT_FALSE(pruner.Prune(&s, i));
  s.trials[i].intermediate_values = {{0, 9.0}, {1, kNaN}};
  EXPECT_FALSE(pruner.Prune(&s, i));  // NaN does not matter before the rung's end
  EXPECT_TRUE(s.trials[i].system_attrs.empty());
}

TEST(SuccessiveHalvingPrunerTest, FirstEntrantIsPromotedAndRecorded) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(1, 2));
  const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs, (Attrs{{"completed_rung_0", 0.5}}));
}

TEST(SuccessiveHalvingPrunerTest, ClimbsSeveralRungsInOneCall) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(1, 2));  // rungs end at 1, 2, 4, 8
  const size_t i = AddTrial(&s, TrialState::kRunning, {{0, 3.0}, {5, 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(
      s.trials[i].system_attrs,
      (Attrs{{"completed_rung_0", 0.5}, {"completed_rung_1", 0.5}, {"completed_rung_2", 0.5}}));
}

TEST(SuccessiveHalvingPrunerTest, MinEarlyStoppingRateMovesTheFirstRung) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(2, 3, 1));  // rungs end at 6, 18, ...
  const size_t i = AddTrial(&s, TrialState::kRunning, {{5, 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_TRUE(s.trials[i].system_attrs.empty());
  s.trials[i].intermediate_values[6] = 0.5;
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs, (Attrs{{"completed_rung_0", 0.5}}));
}

TEST(SuccessiveHalvingPrunerTest, StartsFromTheTrialsOwnCompletedRungs) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(1, 2));
  // Rung 0 done: at step 1 nothing is left to judge, at step 2 rung 1 is.
  const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 9.0}}, {{"completed_rung_0", 9.0}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs.size(), 1u);
  s.trials[i].intermediate_values[2] = 7.0;
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs.at("completed_rung_1"), 7.0);
}

TEST(SuccessiveHalvingPrunerTest, PromotesTheTopFractionOfTheRungTiesIncluded) {
  for (bool maximize : {false, true}) {
    SCOPED_TRACE(maximize);
    // Rung 0's values so far, from trials in any state; with this trial's: 4 values, and with
    // reduction factor 2 the best 2 go on.
    Study s = MakeStudy(maximize);
    AddTrial(&s, TrialState::kComplete, {{1, 1.0}}, {{"completed_rung_0", 1.0}});
    AddTrial(&s, TrialState::kFail, {{1, 2.0}}, {{"completed_rung_0", 2.0}});
    AddTrial(&s, TrialState::kPruned, {{1, 3.0}}, {{"completed_rung_0", 3.0}});
    const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 0.0}});
    SuccessiveHalvingPruner pruner(Spec(1, 2));
    const double good = 2.0, bad = maximize ? 1.5 : 2.5;
    s.trials[i].intermediate_values[1] = good;
    EXPECT_FALSE(pruner.Prune(&s, i));
    s.trials[i].system_attrs.clear();
    s.trials[i].intermediate_values[1] = bad;
    EXPECT_TRUE(pruner.Prune(&s, i));
    EXPECT_EQ(s.trials[i].system_attrs, (Attrs{{"completed_rung_0", bad}}));  // recorded anyway
  }
}

TEST(SuccessiveHalvingPrunerTest, EarlyEntrantsMustBeTheBestSoFar) {
  Study s = MakeStudy(false);
  AddTrial(&s, TrialState::kRunning, {{1, 1.0}}, {{"completed_rung_0", 1.0}});
  const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 1.5}});
  SuccessiveHalvingPruner pruner(Spec(1, 4));  // 2 entrants // 4 - 1 == -1: index 0
  EXPECT_TRUE(pruner.Prune(&s, i));
  s.trials[i].system_attrs.clear();
  s.trials[i].intermediate_values[1] = 1.0;
  EXPECT_FALSE(pruner.Prune(&s, i));
}

TEST(SuccessiveHalvingPrunerTest, BootstrapCountPrunesTheRungsFirstEntrants) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(1, 2, 0, 2));
  const size_t a = AddTrial(&s, TrialState::kRunning, {{1, 0.0}});
  EXPECT_TRUE(pruner.Prune(&s, a));  // 1 value at rung 0, needs more than 2
  const size_t b = AddTrial(&s, TrialState::kRunning, {{1, 0.0}});
  EXPECT_TRUE(pruner.Prune(&s, b));
  const size_t c = AddTrial(&s, TrialState::kRunning, {{1, 0.0}});
  EXPECT_FALSE(pruner.Prune(&s, c));  // 3 values, a tie for the best
  EXPECT_EQ(s.trials[c].system_attrs, (Attrs{{"completed_rung_0", 0.0}}));
}

TEST(SuccessiveHalvingPrunerTest, NaNAtARungsEndIsPrunedUnrecorded) {
  Study s = MakeStudy(true);
  SuccessiveHalvingPruner pruner(Spec(1, 2));
  const size_t i = AddTrial(&s, TrialState::kRunning, {{0, 1.0}, {1, kNaN}});
  EXPECT_TRUE(pruner.Prune(&s, i));
  EXPECT_TRUE(s.trials[i].system_attrs.empty());
}

TEST(SuccessiveHalvingPrunerTest, JudgesTheValueAtTheLargestStep) {
  Study s = MakeStudy(false);
  AddTrial(&s, TrialState::kComplete, {{4, 1.0}}, {{"completed_rung_0", 1.0}});
  SuccessiveHalvingPruner pruner(Spec(4, 2));
  const size_t i = AddTrial(&s, TrialState::kRunning, {{4, 0.5}, {2, 9.0}});  // 2 reported last
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs.at("completed_rung_0"), 0.5);
}

TEST(SuccessiveHalvingPrunerTest, AutoMinResourceWaitsForACompleteTrialThenSticks) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(0, 2));
  AddTrial(&s, TrialState::kPruned, {{900, 1.0}});
  AddTrial(&s, TrialState::kFail, {{900, 1.0}});
  AddTrial(&s, TrialState::kComplete, {});  // no reports: no estimate
  const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_TRUE(s.trials[i].system_attrs.empty());

  AddTrial(&s, TrialState::kComplete, {{0, 1.0}, {299, 1.0}});  // min_resource = 299 / 100 = 2
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_TRUE(s.trials[i].system_attrs.empty());  // step 1 < 2
  s.trials[i].intermediate_values[2] = 0.5;
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs, (Attrs{{"completed_rung_0", 0.5}}));

  // Estimated once: a longer COMPLETE trial changes nothing.
  AddTrial(&s, TrialState::kComplete, {{5000, 1.0}});
  s.trials[i].intermediate_values[4] = 0.5;
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs.count("completed_rung_1"), 1u);
}

TEST(SuccessiveHalvingPrunerTest, AutoMinResourceIsAtLeastOne) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(0, 2));
  AddTrial(&s, TrialState::kComplete, {{42, 1.0}});
  const size_t i = AddTrial(&s, TrialState::kRunning, {{1, 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_EQ(s.trials[i].system_attrs, (Attrs{{"completed_rung_0", 0.5}}));
}

TEST(SuccessiveHalvingPrunerTest, HugeRungEndsDoNotOverflow) {
  Study s = MakeStudy(false);
  SuccessiveHalvingPruner pruner(Spec(1000, 5, 40));
  const size_t i = AddTrial(&s, TrialState::kRunning, {{std::numeric_limits<int64_t>::max(), 0.5}});
  EXPECT_FALSE(pruner.Prune(&s, i));
  EXPECT_TRUE(s.trials[i].system_attrs.empty());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
