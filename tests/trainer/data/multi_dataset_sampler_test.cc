// train.multi_dataset_sampler (trainer/data/multi_dataset_sampler.h): round_robin's order and
// stop, proportional's every step once an epoch, seeded and deterministic, and the epoch's shape.
#include "trainer/data/multi_dataset_sampler.h"

#include <algorithm>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;

TEST(ShapeEpoch, StepsPerDatasetAndSamples) {
  // 10 and 25 examples, batch 4, one rank: 3 and 7 batches.
  const EpochShape p = ShapeEpoch({10, 25}, 4, 1, 1, MultiDatasetSampler::kProportional);
  EXPECT_THAT(p.batches, ElementsAre(3, 7));
  EXPECT_THAT(p.used, ElementsAre(3, 7));
  EXPECT_EQ(p.steps_per_epoch, 10);
  EXPECT_EQ(p.samples, 35);
  // round_robin stops when the smallest runs out: 3 rounds of 2 steps, 12 of the 25 examples.
  const EpochShape r = ShapeEpoch({10, 25}, 4, 1, 1, MultiDatasetSampler::kRoundRobin);
  EXPECT_THAT(r.used, ElementsAre(3, 3));
  EXPECT_EQ(r.steps_per_epoch, 6);
  EXPECT_EQ(r.samples, 10 + 12);
  // grad_accum 2: a step takes 2 batches of one dataset; 2 ranks pad each dataset.
  const EpochShape g = ShapeEpoch({10, 25}, 4, 2, 2, MultiDatasetSampler::kProportional);
  EXPECT_THAT(g.batches, ElementsAre(2, 4));
  EXPECT_THAT(g.steps, ElementsAre(1, 2));
  EXPECT_EQ(g.samples, 10 + 26);
}

TEST(DatasetOrder, RoundRobinCyclesInOrderUntilTheSmallestRunsOut) {
  const EpochShape r = ShapeEpoch({8, 20, 12}, 4, 1, 1, MultiDatasetSampler::kRoundRobin);
  EXPECT_THAT(DatasetOrder(r, MultiDatasetSampler::kRoundRobin, 42, 0),
              ElementsAre(0, 1, 2, 0, 1, 2));
  // Not seeded: every epoch the same.
  EXPECT_EQ(DatasetOrder(r, MultiDatasetSampler::kRoundRobin, 7, 3),
            DatasetOrder(r, MultiDatasetSampler::kRoundRobin, 42, 0));
}

TEST(DatasetOrder, ProportionalTakesEveryStepOnceAnEpoch) {
  const EpochShape p = ShapeEpoch({40, 100, 8}, 4, 1, 1, MultiDatasetSampler::kProportional);
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const std::vector<int> order = DatasetOrder(p, MultiDatasetSampler::kProportional, 42, epoch);
    ASSERT_EQ(order.size(), 37u);
    EXPECT_EQ(std::count(order.begin(), order.end(), 0), 10);
    EXPECT_EQ(std::count(order.begin(), order.end(), 1), 25);
    EXPECT_EQ(std::count(order.begin(), order.end(), 2), 2);
  }
}

TEST(DatasetOrder, ProportionalIsSeededAndDeterministic) {
  const EpochShape p = ShapeEpoch({40, 100}, 4, 1, 1, MultiDatasetSampler::kProportional);
  const auto order = [&](uint64_t seed, int64_t epoch) {
    return DatasetOrder(p, MultiDatasetSampler::kProportional, seed, epoch);
  };
  EXPECT_EQ(order(42, 0), order(42, 0));  // the same on every rank
  EXPECT_NE(order(42, 0), order(42, 1));  // a new mix each epoch
  EXPECT_NE(order(42, 0), order(43, 0));  // train.seed
  // Mixed, not one dataset after the other.
  const std::vector<int> o = order(42, 0);
  EXPECT_FALSE(std::is_sorted(o.begin(), o.end()));
}

TEST(DatasetOrder, OneDatasetIsThePlainRun) {
  for (auto sampler : {MultiDatasetSampler::kProportional, MultiDatasetSampler::kRoundRobin}) {
    const EpochShape s = ShapeEpoch({10}, 4, 1, 1, sampler);
    EXPECT_THAT(DatasetOrder(s, sampler, 42, 0), ElementsAre(0, 0, 0));
  }
}

TEST(ParseMultiDatasetSampler, Names) {
  EXPECT_EQ(ParseMultiDatasetSampler("round_robin"), MultiDatasetSampler::kRoundRobin);
  EXPECT_EQ(ParseMultiDatasetSampler("proportional"), MultiDatasetSampler::kProportional);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
