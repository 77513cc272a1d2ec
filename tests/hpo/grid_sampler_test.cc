// The grid rule of hpo/samplers/grid_sampler.h, checked point by point.
#include "hpo/samplers/grid_sampler.h"

#include <chrono>
#include <cmath>

#include "gtest/gtest.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

SearchSettings Config() {
  SearchSettings c;
  c.maximize = true;
  c.lr.name = "lr";
  c.lr.distribution = "log_uniform";
  c.lr.min = 1e-5;
  c.lr.max = 1e-3;
  c.batch_sizes = {16, 32, 64, 128};
  // The full grid's lrs: 1e-5, 3.16e-5, 1e-4, 3.16e-4, 1e-3 (a factor sqrt(10) apart).
  MutableGridSpec(&c) = {2, 5, 10.0, 1};
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
  // Best: trial 1 (lr 4e-5, batch 128: neighbours 64, 128): the grid lrs within a factor
  // sqrt(10) of 4e-5 are 3.16e-5 and 1e-4. Then trial 2 (2e-4, 64: 32, 64, 128): 1e-4 and
  // 3.16e-4; (1e-4, 32) is trial 0 and (1e-4, 64), (1e-4, 128) are in the first group. Each
  // group nearest its centre first: its batch, then the neighbours; the lr nearest its lr first
  // (3.16e-5 is nearer 4e-5 than 1e-4 is; 3.16e-4 nearer 2e-4 than 1e-4), ties by batch.
  const double r = std::sqrt(10.0);
  const std::vector<std::pair<double, double>> want = {
      {1e-4 / r, 128}, {1e-4, 128},    {1e-4 / r, 64}, {1e-4, 64},
      {1e-4 * r, 64},  {1e-4 * r, 32}, {1e-4 * r, 128}};
  ASSERT_EQ(grid.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(grid[i].at(kLrParam), want[i].first, 1e-15) << i;
    EXPECT_EQ(grid[i].at(kBatchParam), want[i].second) << i;
  }
  // Every lr is one of the full grid's.
  const std::vector<Params> full = FullGrid(Config());
  for (const Params& p : grid) {
    bool on_grid = false;
    for (const Params& q : full) on_grid = on_grid || SamePoint(p, q);
    EXPECT_TRUE(on_grid) << p.at(kLrParam);
    for (const Trial& t : study.trials) EXPECT_FALSE(SamePoint(p, t.params));
  }
}

// A grid of 300,000 lrs (issue 32: from 10^5 on, hpo spun for minutes and the head dropped it):
// each point's duplicate check looks only at points of about its lr. Before, each point was
// compared with every point before it, about 10^10 comparisons here.
TEST(LocalGridTest, AHugeGridIsBuiltInAboutASecond) {
  Study study;
  study.trials = {Complete(0, 1e-4, 32, 0.9), Complete(1, 2e-4, 32, 0.5)};
  SearchSettings c = Config();
  MutableGridSpec(&c) = {2, 300000, 10.0, 1};
  const auto start = std::chrono::steady_clock::now();
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Window of a factor 10 in a range of 100: half the lattice, 2 windows that overlap, 2 or 3
  // batches each.
  EXPECT_GT(grid.size(), 300000u);
  EXPECT_LT(seconds, 30.0);
  for (size_t i = 1; i < std::min<size_t>(grid.size(), 1000); ++i) {
    EXPECT_FALSE(SamePoint(grid[i], grid[i - 1])) << i;
  }
}

TEST(LocalGridTest, SlidesTheWindowInsideTheRange) {
  // 9 grid lrs over [1e-5, 1e-3], a factor 10^(1/4) apart. A centre at the upper bound: the
  // window [1e-3/sqrt(10), 1e-3*sqrt(10)] slides to [1e-4, 1e-3], five grid lrs (1e-3 run).
  Study study;
  study.trials = {Complete(0, 1e-3, 16, 0.9), Complete(1, 1e-5, 16, 0.1)};
  SearchSettings c = Config();
  MutableGridSpec(&c) = {1, 9, 10.0, 0};
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 4u);
  const double q = std::pow(10.0, 0.25);
  const double want[] = {1e-4 * q * q * q, 1e-4 * q * q, 1e-4 * q, 1e-4};  // nearest 1e-3 first
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(grid[i].at(kLrParam), want[i], 1e-15) << i;
  for (const Params& p : grid) {
    EXPECT_LE(p.at(kLrParam), 1e-3);
    for (const Trial& t : study.trials) EXPECT_FALSE(SamePoint(p, t.params));
  }
  // Near the lower bound: [1e-5, 1e-4].
  std::vector<double> low = LocalLrs(c, 1.2e-5);
  ASSERT_EQ(low.size(), 5u);
  EXPECT_EQ(low.front(), 1e-5);
  EXPECT_NEAR(low.back(), 1e-4, 1e-18);
  // Inside the range the window is centred: a grid lr as centre is the middle point.
  std::vector<double> mid = LocalLrs(c, 1e-4);
  ASSERT_EQ(mid.size(), 5u);
  EXPECT_NEAR(mid[2], 1e-4, 1e-18);
  // A range narrower than the span is covered whole, every point distinct.
  c.lr.max = 2e-5;
  std::vector<double> narrow = LocalLrs(c, 1.5e-5);
  ASSERT_EQ(narrow.size(), 9u);
  EXPECT_EQ(narrow.front(), 1e-5);
  EXPECT_EQ(narrow.back(), 2e-5);
  for (size_t i = 1; i < narrow.size(); ++i) EXPECT_GT(narrow[i], narrow[i - 1]);
  // A window narrower than the grid's step still holds the nearest grid lr.
  c.lr.max = 1e-3;
  MutableGridSpec(&c).lr_span = 1.0;
  EXPECT_EQ(LocalLrs(c, 1.3e-4).size(), 1u);
  EXPECT_NEAR(LocalLrs(c, 1.3e-4)[0], 1e-4, 1e-18);
}

TEST(LocalGridTest, OtherParametersKeepTheCentresValues) {
  SearchSettings c = Config();
  MutableGridSpec(&c) = {1, 5, 10.0, 0};
  Study study;
  Trial best = Complete(0, 1e-4, 32, 0.9);
  best.params["train.weight_decay"] = 0.03;
  study.trials = {best, Complete(1, 1e-4, 64, 0.1)};
  study.trials[1].params["train.weight_decay"] = 0.07;
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 2u);  // 1e-4 / sqrt(10) and 1e-4 * sqrt(10) at batch 32 (1e-4 was run)
  for (const Params& p : grid) {
    EXPECT_EQ(p.at("train.weight_decay"), 0.03);
    EXPECT_EQ(p.at(kBatchParam), 32);
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
  SearchSettings c = Config();
  c.maximize = false;
  MutableGridSpec(&c) = {1, 1, 4.0, 0};  // a one-lr grid: sqrt(1e-5 * 1e-3) = 1e-4
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  // Best is trial 1 (0.2, at batch 64): the grid's one lr at its batch.
  ASSERT_EQ(grid.size(), 1u);
  EXPECT_NEAR(grid[0].at(kLrParam), 1e-4, 1e-18);
  EXPECT_EQ(grid[0].at(kBatchParam), 64);
  MutableGridSpec(&c).batch_neighbors = 1;
  grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 2u);  // (1e-4, 32) is trial 0
  EXPECT_EQ(grid[0].at(kBatchParam), 64);
  EXPECT_EQ(grid[1].at(kBatchParam), 128);
}

TEST(LocalGridTest, CategoricalLrTakesNearestListedValues) {
  SearchSettings c = Config();
  c.lr.distribution = "categorical";
  c.lr.values = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3};
  MutableGridSpec(&c) = {1, 3, 4.0, 0};
  Study study;
  study.trials = {Complete(0, 1e-3, 64, 0.9)};
  std::vector<Params> grid = LocalGrid(c, study, All(study));
  ASSERT_EQ(grid.size(), 2u);  // 3e-4, 1e-4, nearest 1e-3 first (1e-3 already run)
  EXPECT_EQ(grid[0].at(kLrParam), 3e-4);
  EXPECT_EQ(grid[1].at(kLrParam), 1e-4);
}

// The climb's round: the unrun lattice neighbours of the best COMPLETE lattice point.
TEST(ClimbStepTest, NeighboursOfTheBestGridPoint) {
  const double r = std::sqrt(10.0);  // Config()'s grid lrs: 1e-5 .. 1e-3, a factor r apart
  Study study;
  // Trial 0 is off the lattice (a random point) and best: not the incumbent. Trial 1, at the
  // grid lr 1e-4 and batch 64, is; trial 2 is PRUNED, so its better value does not count.
  study.trials = {Complete(0, 4e-5, 32, 0.99), Complete(1, 1e-4, 64, 0.8),
                  Complete(2, 1e-4, 32, 0.95), Complete(3, 1e-4 * r, 128, 0.7)};
  study.trials[2].state = TrialState::kPruned;
  const std::vector<Params> planned = {{{kLrParam, 1e-4 / r}, {kBatchParam, 64}}};
  std::vector<Params> step = ClimbStep(Config(), study, planned);
  // 8 neighbours, less (1e-4/r, 64) planned, (1e-4, 32) and (1e-4*r, 128) run.
  const std::vector<std::pair<double, double>> want = {
      {1e-4 / r, 32}, {1e-4 / r, 128}, {1e-4, 128}, {1e-4 * r, 32}, {1e-4 * r, 64}};
  ASSERT_EQ(step.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(step[i].at(kLrParam), want[i].first, 1e-15) << i;
    EXPECT_EQ(step[i].at(kBatchParam), want[i].second) << i;
  }
  // At the corner of the lattice (the top lr, the largest batch): 3 neighbours, one of them
  // (1e-4*r, 128) run.
  study.trials.push_back(Complete(4, 1e-3, 128, 0.9));
  step = ClimbStep(Config(), study, planned);
  ASSERT_EQ(step.size(), 2u);
  for (const Params& p : step) {
    EXPECT_LE(p.at(kLrParam), 1e-3);
    EXPECT_GE(p.at(kBatchParam), 64);
  }
  // Every neighbour run: a local optimum, no round.
  for (const Params& p : step) {
    study.trials.push_back(Complete(static_cast<int64_t>(study.trials.size()), p.at(kLrParam),
                                    p.at(kBatchParam), 0.1));
  }
  EXPECT_TRUE(ClimbStep(Config(), study, planned).empty());
  // Minimizing, the lowest value is the incumbent; no COMPLETE lattice point: no round.
  SearchSettings min = Config();
  min.maximize = false;
  step = ClimbStep(min, study, planned);
  ASSERT_FALSE(step.empty());
  Study off_lattice;
  off_lattice.trials = {Complete(0, 4e-5, 32, 0.9)};
  EXPECT_TRUE(ClimbStep(Config(), off_lattice, {}).empty());
}

TEST(FullGridTest, SpansTheRange) {
  SearchSettings c = Config();
  MutableGridSpec(&c).lr_points = 3;
  c.batch_sizes = {32, 64};
  std::vector<Params> grid = FullGrid(c);
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(grid[0].at(kLrParam), 1e-5);
  EXPECT_NEAR(grid[2].at(kLrParam), 1e-4, 1e-15);
  EXPECT_EQ(grid[5].at(kLrParam), 1e-3);
  EXPECT_EQ(grid[5].at(kBatchParam), 64);
}

TEST(FullGridTest, MultipliesByTheOtherParameters) {
  SearchSettings c = Config();
  MutableGridSpec(&c).lr_points = 2;
  c.batch_sizes = {32};
  ParamSpec wd;
  wd.name = "train.weight_decay";
  wd.distribution = "uniform";
  wd.min = 0.0;
  wd.max = 0.1;
  ParamSpec epochs;
  epochs.name = "train.epochs";
  epochs.distribution = "int";
  epochs.min = 1;
  epochs.max = 3;
  ParamSpec pooling;
  pooling.name = "model.pooling";
  pooling.distribution = "categorical";
  pooling.labels = {"mean", "cls"};
  c.params = {wd, epochs, pooling};
  std::vector<Params> grid = FullGrid(c);
  // 2 lr x 1 batch x 2 weight decays x {1, 2, 3} epochs (2 points rounded: 1, 3 -> [1, 3])
  // x 2 poolings.
  ASSERT_EQ(grid.size(), 2u * 2 * 2 * 2);
  EXPECT_EQ(grid[0].at("train.weight_decay"), 0.0);
  EXPECT_EQ(grid[0].at("train.epochs"), 1);
  EXPECT_EQ(grid[0].at("model.pooling"), 0);
  EXPECT_EQ(grid[1].at("model.pooling"), 1);
  EXPECT_EQ(grid[2].at("train.epochs"), 3);
  EXPECT_EQ(grid.back().at("train.weight_decay"), 0.1);
  for (size_t i = 0; i < grid.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(SamePoint(grid[i], grid[j]));
  }
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
