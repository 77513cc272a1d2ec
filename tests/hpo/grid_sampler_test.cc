// The grid rule of DESIGN.md, checked point by point.
#include "hpo/samplers/grid_sampler.h"

#include <cmath>

#include "gtest/gtest.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

SweepConfig Config() {
  SweepConfig c;
  c.maximize = true;
  c.lr = {"log_uniform", 1e-5, 1e-3, {}};
  c.batch_sizes = {16, 32, 64, 128};
  c.grid = {2, 5, 4.0, 1};
  return c;
}

Trial Complete(int64_t number, double lr, double batch, double value) {
  Trial t;
  t.number = number;
  t.point = number;
  t.state = TrialState::kComplete;
  t.params = {{kLrParam, lr}, {kBatchParam, batch}};
  t.value = value;
  return t;
}

std::vector<const Trial*> All(const Study& s) {
  std::vector<const Trial*> out;
  for (const Trial& t : s.trials) out.push_back(&t);
  return out;
}

TEST(LocalGridTest, FollowsTheRule) {
  Study study;
  study.trials = {Complete(0, 1e-4, 32, 0.5), Complete(1, 4e-5, 128, 0.9),
                  Complete(2, 2e-4, 64, 0.7), Complete(3, 5e-4, 16, 0.1)};
  std::vector<Params> grid = LocalGrid(Config(), study, All(study));
  // Best: trial 1 (lr 4e-5, batch 128: neighbours 64, 128), then trial 2 (2e-4, 64: 32, 64, 128).
  // 5 lrs over [lr/2, lr*2]; the centre with its own batch is already run -> dropped, and so
  // is the second group's (1e-4, 32), which is trial 0.
  ASSERT_EQ(grid.size(), 5u * 2 - 1 + 5u * 3 - 2);
  const double r = std::sqrt(2.0);
  const double lrs1[] = {2e-5, 4e-5 / r, 4e-5, 4e-5 * r, 8e-5};
  size_t i = 0;
  for (double lr : lrs1) {
    for (double batch : {64.0, 128.0}) {
      if (lr == 4e-5 && batch == 128) continue;
      EXPECT_NEAR(grid[i].at(kLrParam), lr, 1e-12) << i;
      EXPECT_EQ(grid[i].at(kBatchParam), batch) << i;
      ++i;
    }
  }
  EXPECT_NEAR(grid[i].at(kLrParam), 1e-4, 1e-12);  // second centre's group starts
  EXPECT_EQ(grid[i].at(kBatchParam), 64);           // (1e-4, 32) is trial 0
  for (const Params& p : grid) {
    for (const Trial& t : study.trials) EXPECT_FALSE(SamePoint(p, t.params));
  }
}

TEST(LocalGridTest, ClipsToRangeAndDeduplicates) {
  Study study;
  study.trials = {Complete(0, 1e-3, 16, 0.9), Complete(1, 1e-5, 16, 0.1)};
  SweepConfig c = Config();
  c.grid.top_k = 1;
  c.grid.batch_neighbors = 0;
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  // lrs 5e-4, 7.07e-4, [1e-3 already run], 1e-3 clipped (dup), 1e-3 clipped (dup).
  ASSERT_EQ(grid.size(), 2u);
  EXPECT_NEAR(grid[0].at(kLrParam), 5e-4, 1e-15);
  EXPECT_NEAR(grid[1].at(kLrParam), 1e-3 / std::sqrt(2.0), 1e-15);
  for (const Params& p : grid) {
    EXPECT_LE(p.at(kLrParam), 1e-3);
    for (const Trial& t : study.trials) EXPECT_FALSE(SamePoint(p, t.params));
  }
}

TEST(LocalGridTest, MinimizeRanksLowestFirstAndSkipsPrunedAndFailed) {
  Study study;
  study.maximize = false;
  Trial pruned = Complete(2, 3e-4, 16, -5);
  pruned.state = TrialState::kPruned;
  Trial failed = Complete(3, 3e-4, 32, -9);
  failed.state = TrialState::kFail;
  study.trials = {Complete(0, 1e-4, 32, 0.5), Complete(1, 4e-5, 64, 0.2), pruned, failed};
  SweepConfig c = Config();
  c.maximize = false;
  c.grid = {1, 1, 4.0, 0};
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  // Best is trial 1 (0.2); one lr point = the centre itself, already run -> nothing new.
  EXPECT_TRUE(grid.empty());
  c.grid.batch_neighbors = 1;
  grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 2u);
  EXPECT_EQ(grid[0].at(kBatchParam), 32);
  EXPECT_EQ(grid[1].at(kBatchParam), 128);
  EXPECT_EQ(grid[0].at(kLrParam), 4e-5);
}

TEST(LocalGridTest, CategoricalLrTakesNearestListedValues) {
  SweepConfig c = Config();
  c.lr = {"categorical", 1e-5, 1e-3, {1e-5, 3e-5, 1e-4, 3e-4, 1e-3}};
  c.grid = {1, 3, 4.0, 0};
  Study study;
  study.trials = {Complete(0, 1e-3, 64, 0.9)};
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 2u);  // 1e-4, 3e-4 (+ 1e-3 already run)
  EXPECT_EQ(grid[0].at(kLrParam), 1e-4);
  EXPECT_EQ(grid[1].at(kLrParam), 3e-4);
}

TEST(FullGridTest, SpansTheRange) {
  SweepConfig c = Config();
  c.grid.lr_points = 3;
  c.batch_sizes = {32, 64};
  std::vector<Params> grid = FullGrid(c);
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(grid[0].at(kLrParam), 1e-5);
  EXPECT_NEAR(grid[2].at(kLrParam), 1e-4, 1e-15);
  EXPECT_EQ(grid[5].at(kLrParam), 1e-3);
  EXPECT_EQ(grid[5].at(kBatchParam), 64);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
