// The dry run's plan stays small and cheap for any sizes: the first kPlanRandomPoints random
// points and "... N more", MaxPlannedTrials by arithmetic past what can be listed.
#include "hpo/config/sweep_plan.h"

#include <chrono>
#include <limits>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/samplers/random_sampler.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;

SweepConfig Config(const std::string& search) {
  return ConfigFromYaml(
      "name: plan\n"
      "metric: {name: m, goal: maximize}\n"
      "trainer: {synthetic: {steps: 4}}\n"
      "parameters:\n"
      "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-2}\n"
      "  batch_size: {values: [16, 32, 64, 128]}\n" +
          search,
      "plan.yaml");
}

// Rows of the random points: "    TRIAL  LR  BATCH  LR_EFFECTIVE".
int RandomRows(const std::string& plan) {
  const std::regex row(R"(^ +[0-9]+  [0-9.]+e[-+][0-9]+ +[0-9]+  [0-9.]+e[-+][0-9]+$)");
  std::istringstream lines(plan);
  int rows = 0;
  for (std::string line; std::getline(lines, line);) rows += std::regex_match(line, row) ? 1 : 0;
  return rows;
}

TEST(SweepPlanTest, ListsEverySmallRandomPhase) {
  const std::string plan =
      DescribeSweepPlan(Config("search: {method: random, random: {trials: 8}}\n"));
  EXPECT_EQ(RandomRows(plan), 8);
  EXPECT_EQ(plan.find("more random points"), std::string::npos);
}

TEST(SweepPlanTest, ABillionRandomPointsAreListedTwentyAndCountedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  const SweepConfig c =
      Config("search: {method: random_then_grid, random: {trials: 1000000000}}\n");
  const std::string plan = DescribeSweepPlan(c);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(RandomRows(plan), kPlanRandomPoints);
  EXPECT_THAT(plan, HasSubstr("    ... 999999980 more random points\n"));
  EXPECT_LT(plan.size(), 10000u);
  // 1e9 random points, then 2 x (at most 4 lrs of 10) x 3 batch sizes.
  EXPECT_EQ(MaxPlannedTrials(c), 1000000000 + 2 * 4 * 3);
}

TEST(SweepPlanTest, HugeGridsAreBoundedByArithmetic) {
  const auto start = std::chrono::steady_clock::now();
  SweepConfig grid = Config("search: {method: grid, grid: {lr_points: 1000000000}}\n");
  EXPECT_EQ(MaxPlannedTrials(grid), 4000000000);
  EXPECT_THAT(DescribeSweepPlan(grid), HasSubstr("planned     at most 4000000000 trials"));
  // The local grid around a best point: a window of ratio lr_span holds about
  // log(10) / log(1e3) of the billion lattice lrs.
  SweepConfig local = Config(
      "search: {method: random_then_grid, random: {trials: 8}, grid: {lr_points: 1000000000}}\n");
  const int64_t lrs = (MaxPlannedTrials(local) - 8) / (2 * 3);
  EXPECT_GE(lrs, 333333333);
  EXPECT_LE(lrs, 333333336);
  // Counts saturate rather than overflow.
  MutableRandomSpec(&local).trials = std::numeric_limits<int64_t>::max() - 1;
  EXPECT_EQ(MaxPlannedTrials(local), std::numeric_limits<int64_t>::max());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(SweepPlanTest, SmallGridsAreCountedExactly) {
  EXPECT_EQ(MaxPlannedTrials(Config("search: {method: grid, grid: {lr_points: 5}}\n")), 20);
  // configs/lr.yaml's shape: 8 random, then 2 x 4 lrs x 3 batches.
  EXPECT_EQ(MaxPlannedTrials(Config("search: {method: random_then_grid, random: {trials: 8}, "
                                    "grid: {top_k: 2, lr_points: 10, lr_span: 10.0, "
                                    "batch_neighbors: 1}}\n")),
            32);
}

TEST(SweepPlanTest, TheResourcesLineSaysWhetherTrialsRunInWarmWorkers) {
  SweepConfig c = Config("search: {method: random, random: {trials: 2}}\n");
  // Agents run only `trainer train` trials in warm workers, never the synthetic one.
  EXPECT_THAT(DescribeSweepPlan(c),
              HasSubstr("  resources     1 rank(s) per trial (a GPU each, or a CPU slot); a fresh "
                        "trainer process per rank (warm workers take `trainer train` "
                        "trials only)\n"));
  c.trainer.synthetic = false;
  c.trainer.config = "trainer.yaml";
  c.worker_max_trials = 5;
  EXPECT_THAT(DescribeSweepPlan(c),
              HasSubstr("  resources     1 rank(s) per trial (a GPU each, or a CPU slot); warm "
                        "trainer workers, each recycled after 5 trial(s)\n"));
  c.trials_per_gpu = 4;
  EXPECT_THAT(DescribeSweepPlan(c),
              HasSubstr("  resources     1 rank per trial, up to 4 trials a GPU while their "
                        "memory estimates fit, 1 a CPU slot; warm trainer workers, each recycled "
                        "after 5 trial(s)\n"));
  c.trials_per_gpu = 1;
  c.gpus_per_trial = 2;
  EXPECT_THAT(DescribeSweepPlan(c),
              HasSubstr("  resources     2 rank(s) per trial (a GPU each, or a CPU slot); warm "
                        "trainer workers, each recycled after 5 trial(s); a trial on the same "
                        "slots as the last reuses its process group\n"));
  c.reuse_workers = false;
  EXPECT_THAT(DescribeSweepPlan(c),
              HasSubstr("; a fresh trainer process per rank (reuse_workers: false)\n"));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
