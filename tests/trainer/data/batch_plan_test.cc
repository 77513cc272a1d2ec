// trainer/data/batch_plan.h: each rank's share of an epoch and the pad length of each step's batch,
// the same on every rank; grouping by length as Hugging Face's group_by_length; buckets for
// CUDA graphs; train.batch_sampler: no_duplicates.
#include "trainer/data/batch_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/data/datasets.h"

namespace tunefleet {
namespace trainer {
namespace {

// n examples with pseudo-random lengths in [3, 3 + spread) per text.
ExampleLengths Lengths(int64_t n, bool pairs, int64_t spread = 60) {
  ExampleLengths l;
  uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((x >> 33) % static_cast<uint64_t>(spread)) + 3;
  };
  for (int64_t i = 0; i < n; ++i) {
    l.first.push_back(next());
    if (pairs) l.second.push_back(next());
  }
  return l;
}

BatchPlanOptions Options(int64_t batch, int rank, int world, bool group) {
  BatchPlanOptions o;
  o.batch_size = batch;
  o.rank = rank;
  o.world = world;
  o.seed = 7;
  o.shuffle = true;
  o.group_by_length = group;
  return o;
}

int64_t Longer(const ExampleLengths& l, int64_t i) {
  return l.second.empty() ? l.first[i] : std::max(l.first[i], l.second[i]);
}

TEST(BatchPlanTest, UngroupedIsDistributedSamplersShare) {
  const ExampleLengths l = Lengths(103, true);
  for (int world : {1, 2, 3, 4}) {
    for (int rank = 0; rank < world; ++rank) {
      const EpochPlan plan = PlanEpoch(l, 2, Options(8, rank, world, false));
      EXPECT_EQ(plan.order, RankShard(EpochOrder(103, 7, 2, true), rank, world))
          << "world " << world << " rank " << rank;
      const int64_t shard = (103 + world - 1) / world;
      EXPECT_EQ(static_cast<int64_t>(plan.pads.size()), (shard + 7) / 8);
    }
  }
}

// Every rank pads batch k to the same lengths, at least its own longest text per side; the
// ranks together visit the epoch's padded order.
TEST(BatchPlanTest, RanksAgreeOnEachBatchsLength) {
  const ExampleLengths l = Lengths(1001, true);
  for (bool group : {false, true}) {
    const int world = 4;
    const int64_t b = 16;
    std::vector<EpochPlan> plans;
    std::multiset<int64_t> seen;
    for (int r = 0; r < world; ++r) {
      BatchPlanOptions o = Options(b, r, world, group);
      o.pad_multiple = 8;
      plans.push_back(PlanEpoch(l, 0, o));
      seen.insert(plans.back().order.begin(), plans.back().order.end());
    }
    const std::vector<int64_t> order = EpochOrder(1001, 7, 0, true);
    std::multiset<int64_t> expected(order.begin(), order.end());
    for (int i = 0; i < 1004 - 1001; ++i) expected.insert(order[i]);  // padded to 4 x 251
    EXPECT_EQ(seen, expected);
    for (size_t k = 0; k < plans[0].pads.size(); ++k) {
      for (int r = 0; r < world; ++r) {
        EXPECT_EQ(plans[r].pads[k], plans[0].pads[k]) << "batch " << k << " rank " << r;
        const int64_t begin = static_cast<int64_t>(k) * b;
        const int64_t end = std::min<int64_t>(begin + b, plans[r].order.size());
        for (int64_t p = begin; p < end; ++p) {
          const int64_t e = plans[r].order[p];
          EXPECT_GE(plans[r].pads[k].first, l.first[e]);
          EXPECT_GE(plans[r].pads[k].second, l.second[e]);
        }
      }
      EXPECT_EQ(plans[0].pads[k].first % 8, 0);
      EXPECT_EQ(plans[0].pads[k].second % 8, 0);
    }
  }
}

// One rank of batch 2b and two ranks of batch b see the same global batches.
TEST(BatchPlanTest, SameGlobalBatchesOnAnyWorld) {
  const ExampleLengths l = Lengths(640, true);  // a multiple of 2 and of 2b: no padding
  for (bool group : {false, true}) {
    const EpochPlan one = PlanEpoch(l, 1, Options(32, 0, 1, group));
    const EpochPlan r0 = PlanEpoch(l, 1, Options(16, 0, 2, group));
    const EpochPlan r1 = PlanEpoch(l, 1, Options(16, 1, 2, group));
    ASSERT_EQ(one.pads.size(), r0.pads.size());
    for (size_t k = 0; k < one.pads.size(); ++k) {
      std::multiset<int64_t> global(one.order.begin() + 32 * k, one.order.begin() + 32 * (k + 1));
      std::multiset<int64_t> both(r0.order.begin() + 16 * k, r0.order.begin() + 16 * (k + 1));
      both.insert(r1.order.begin() + 16 * k, r1.order.begin() + 16 * (k + 1));
      EXPECT_EQ(global, both) << "batch " << k << (group ? " grouped" : "");
      EXPECT_EQ(one.pads[k], r0.pads[k]);
    }
  }
}

// Grouped: within a megabatch the batches go from long to short, the epoch's longest batch
// first, and far less padding than in shuffled order.
TEST(BatchPlanTest, GroupingSortsMegabatchesLongestFirst) {
  const int64_t n = 5749, b = 32;  // STS-B's size; megabatches of min(50, 5749 / 128) = 44
  const ExampleLengths l = Lengths(n, true);
  ASSERT_EQ(MegabatchBatches(n, b), 44);
  const EpochPlan grouped = PlanEpoch(l, 3, Options(b, 0, 1, true));
  const EpochPlan shuffled = PlanEpoch(l, 3, Options(b, 0, 1, false));
  std::multiset<int64_t> a(grouped.order.begin(), grouped.order.end());
  std::multiset<int64_t> s(shuffled.order.begin(), shuffled.order.end());
  EXPECT_EQ(a, s);  // the same examples
  int64_t longest = 0;
  for (int64_t i = 0; i < n; ++i) longest = std::max(longest, Longer(l, i));
  EXPECT_EQ(Longer(l, grouped.order[0]), longest);
  // Batches 1..43 of the first megabatch: each batch's longest >= the next batch's longest.
  auto batch_max = [&](const EpochPlan& p, int64_t k) {
    int64_t m = 0;
    for (int64_t i = k * b; i < std::min<int64_t>((k + 1) * b, p.order.size()); ++i) {
      m = std::max(m, Longer(l, p.order[i]));
    }
    return m;
  };
  for (int64_t k = 1; k + 1 < 44; ++k) EXPECT_GE(batch_max(grouped, k), batch_max(grouped, k + 1));
  auto padded_tokens = [&](const EpochPlan& p) {
    int64_t t = 0;
    for (size_t k = 0; k < p.pads.size(); ++k) {
      const int64_t rows = std::min<int64_t>(b, p.order.size() - k * b);
      t += rows * (p.pads[k].first + p.pads[k].second);
    }
    return t;
  };
  // The least any batching pads pairs to: both texts to the longer one's length.
  int64_t least = 0;
  for (int64_t i = 0; i < n; ++i) least += 2 * Longer(l, i);
  // Uniform lengths in [3, 63): shuffled batches pad nearly every text to ~62 (about 120 a
  // pair), grouped ones to about the pair's longer text (about 86).
  EXPECT_LT(padded_tokens(grouped), least * 106 / 100);
  EXPECT_GT(padded_tokens(shuffled), padded_tokens(grouped) * 13 / 10);
  // Other epochs, other orders; the same epoch, the same order.
  EXPECT_NE(PlanEpoch(l, 4, Options(b, 0, 1, true)).order, grouped.order);
  EXPECT_EQ(PlanEpoch(l, 3, Options(b, 0, 1, true)).order, grouped.order);
}

TEST(BatchPlanTest, FileOrderIsNeverGrouped) {
  const ExampleLengths l = Lengths(100, false);
  BatchPlanOptions o = Options(10, 0, 1, true);
  o.shuffle = false;
  const EpochPlan plan = PlanEpoch(l, 0, o);
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(plan.order[i], i);
  EXPECT_EQ(plan.pads[0].second, 0);  // one text
}

TEST(BatchPlanTest, BucketsForGraphs) {
  EXPECT_EQ(GraphBuckets(128, 8), (std::vector<int64_t>{16, 32, 64, 128}));
  EXPECT_EQ(GraphBuckets(100, 8), (std::vector<int64_t>{16, 32, 64, 104}));
  EXPECT_EQ(GraphBuckets(512, 8), (std::vector<int64_t>{16, 32, 64, 128, 256, 512}));
  EXPECT_EQ(GraphBuckets(512, 8).back(), 512);
  EXPECT_EQ(GraphBuckets(20, 8), (std::vector<int64_t>{16, 24}));
  EXPECT_EQ(GraphBuckets(128, 8, {20, 40, 60}), (std::vector<int64_t>{24, 40, 64, 128}));
  EXPECT_EQ(GraphBuckets(128, 8, {256}), (std::vector<int64_t>{128}));
  EXPECT_EQ(BucketOf(1, {16, 32}), 16);
  EXPECT_EQ(BucketOf(16, {16, 32}), 16);
  EXPECT_EQ(BucketOf(17, {16, 32}), 32);
  EXPECT_EQ(BucketOf(33, {16, 32}), 32);

  // Pairs pad both texts to the bucket of the longer; the short last batch of every epoch to
  // the bucket of the data's longest text: one shape for all of them.
  const ExampleLengths l = Lengths(1003, true, 90);  // lengths 3..92
  const std::vector<int64_t> ladder = {16, 32, 48, 64, 96, 128};
  std::set<std::pair<int64_t, int64_t>> shapes;
  for (int64_t epoch = 0; epoch < 5; ++epoch) {
    for (int rank = 0; rank < 2; ++rank) {
      BatchPlanOptions o = Options(32, rank, 2, true);
      o.pad_multiple = 8;
      o.buckets = GraphBuckets(128, 8, ladder);
      const EpochPlan plan = PlanEpoch(l, epoch, o);
      ASSERT_EQ(plan.pads.size(), 16u);  // shard 502 = 15 x 32 + 22
      for (size_t k = 0; k < plan.pads.size(); ++k) {
        const PadLengths& p = plan.pads[k];
        EXPECT_EQ(p.first, p.second);
        EXPECT_TRUE(p.first == 16 || p.first == 32 || p.first == 48 || p.first == 64 ||
                    p.first == 96)
            << p.first;
        const int64_t rows = std::min<int64_t>(32, plan.order.size() - 32 * k);
        shapes.insert({rows, p.first});
      }
      EXPECT_EQ(plan.pads.back().first, 96);  // the bucket of 92
    }
  }
  EXPECT_LE(shapes.size(), 6u);  // 5 lengths of full batches + the short last batch
}

// transformers' n / (4 x batch), at most 50, but at least 8 batches.
TEST(BatchPlanTest, DescribesItself) {
  BatchPlanOptions o = Options(128, 0, 4, true);
  o.buckets = {16, 32, 64, 128};
  EXPECT_EQ(DescribeBatchPlan(o, 5749),
            "grouped by length (megabatches of 8 batches of 512, longest first); every rank pads "
            "a step's batch to one length; lengths padded up to 16, 32, 64, 128 "
            "(train.length_buckets)");
  o = Options(32, 0, 1, false);
  EXPECT_EQ(DescribeBatchPlan(o, 5749), "shuffled (train.group_by_length: false)");
  o.shuffle = false;
  EXPECT_EQ(DescribeBatchPlan(o, 5749), "in file order");
}

// Keys for no_duplicates: the anchor of example i is one of n / 3 texts, its positive its own.
TextKeysFn AnchorKeys(int64_t n) {
  return [n](int64_t i) {
    return std::vector<uint64_t>{static_cast<uint64_t>((i * 7) % (n / 3)),
                                 static_cast<uint64_t>(1000000 + i)};
  };
}

TEST(BatchPlanTest, NoDuplicatesRegroupsEachRanksShare) {
  const int64_t n = 301, b = 8;
  const ExampleLengths l = Lengths(n, true);
  for (int world : {1, 2, 3}) {
    std::vector<EpochPlan> plans;
    int64_t duplicates = 0;
    for (int rank = 0; rank < world; ++rank) {
      BatchPlanOptions o = Options(b, rank, world, true);  // group_by_length is not applied
      o.no_duplicates = true;
      o.text_keys = AnchorKeys(n);
      plans.push_back(PlanEpoch(l, 1, o));
      const EpochPlan& plan = plans.back();
      std::vector<int64_t> share = RankShard(EpochOrder(n, 7, 1, true), rank, world);
      const NoDuplicatesResult regrouped = NoDuplicateOrder(share, b, AnchorKeys(n));
      EXPECT_EQ(plan.order, regrouped.order) << "world " << world << " rank " << rank;
      EXPECT_NE(plan.order, share);  // the shuffled share had duplicates in its batches
      std::vector<int64_t> sorted = plan.order;
      std::sort(sorted.begin(), sorted.end());
      std::sort(share.begin(), share.end());
      EXPECT_EQ(sorted, share);  // a permutation: every rank keeps its batches
      const int64_t shard = (n + world - 1) / world;
      ASSERT_EQ(static_cast<int64_t>(plan.pads.size()), (shard + b - 1) / b);
      for (size_t begin = 0; begin < plan.order.size(); begin += b) {
        std::set<uint64_t> anchors;
        for (size_t i = begin; i < std::min(plan.order.size(), begin + b); ++i) {
          if (!anchors.insert(AnchorKeys(n)(plan.order[i])[0]).second) ++duplicates;
        }
      }
    }
    EXPECT_EQ(plans[0].unresolved, duplicates) << "world " << world;  // all ranks' together
    EXPECT_LT(duplicates, 10) << "world " << world;                   // the tails at most
    // The same pads and count on every rank: each step's global batch, all ranks' batches k.
    for (size_t k = 0; k < plans[0].pads.size(); ++k) {
      PadLengths want;
      for (const EpochPlan& p : plans) {
        for (size_t i = k * b; i < std::min(p.order.size(), (k + 1) * b); ++i) {
          want.first = std::max(want.first, l.first[p.order[i]]);
          want.second = std::max(want.second, l.second[p.order[i]]);
        }
      }
      for (const EpochPlan& p : plans) EXPECT_EQ(p.pads[k], want) << "world " << world;
    }
    for (const EpochPlan& p : plans) EXPECT_EQ(p.unresolved, plans[0].unresolved);
  }
}

TEST(BatchPlanTest, NoDuplicatesWithoutDuplicatesKeepsTheOrder) {
  const ExampleLengths l = Lengths(100, true);
  BatchPlanOptions o = Options(10, 0, 1, true);
  o.no_duplicates = true;
  o.text_keys = [](int64_t i) { return std::vector<uint64_t>{static_cast<uint64_t>(i)}; };
  EXPECT_EQ(PlanEpoch(l, 2, o).order, EpochOrder(100, 7, 2, true));  // shuffled, not grouped
  o.shuffle = false;
  const EpochPlan plan = PlanEpoch(l, 0, o);
  EXPECT_EQ(plan.order, EpochOrder(100, 7, 0, false));  // the file order: first rows first
  EXPECT_EQ(plan.unresolved, 0);
  // One text in every example: the batches stand, all but their first example counted.
  o.text_keys = [](int64_t) { return std::vector<uint64_t>{42}; };
  EXPECT_EQ(PlanEpoch(l, 0, o).unresolved, 90);
  EXPECT_EQ(PlanEpoch(l, 0, o).order, EpochOrder(100, 7, 0, false));
}

TEST(BatchPlanTest, DescribesNoDuplicates) {
  BatchPlanOptions o = Options(32, 0, 2, true);
  o.no_duplicates = true;
  EXPECT_EQ(DescribeBatchPlan(o, 1000),
            "no_duplicates (no text twice in a rank's batch); shuffled, not grouped by length; "
            "every rank pads a step's batch to one length");
  o.world = 1;
  EXPECT_EQ(DescribeBatchPlan(o, 1000, "MultipleNegativesRankingLoss"),
            "no_duplicates (the default for MultipleNegativesRankingLoss: no text twice in a "
            "rank's batch); shuffled, not grouped by length");
  o.shuffle = false;
  EXPECT_EQ(DescribeBatchPlan(o, 1000),
            "no_duplicates (no text twice in a rank's batch); in file order");
}

TEST(BatchPlanTest, MegabatchesFollowTransformersWithAFloor) {
  EXPECT_EQ(MegabatchBatches(5749, 32), 44);
  EXPECT_EQ(MegabatchBatches(5749, 128), 11);
  EXPECT_EQ(MegabatchBatches(100000, 32), 50);
  EXPECT_EQ(MegabatchBatches(5749, 512), 8);  // transformers: 2
  EXPECT_EQ(MegabatchBatches(10, 32), 8);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
