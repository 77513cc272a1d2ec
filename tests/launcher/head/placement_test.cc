// Placement: best fit on one node, else the fewest nodes (largest holes first), ranks
// consecutive from the first agent (which hosts rank 0).
#include "launcher/head/placement.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

std::vector<PlacementCandidate> Agents(std::vector<int> free) {
  std::vector<PlacementCandidate> out;
  for (size_t i = 0; i < free.size(); ++i) out.push_back({"a" + std::to_string(i), free[i]});
  return out;
}

TEST(PlacementTest, OneNodeBestFit) {
  EXPECT_EQ(PlaceRanks(Agents({8, 2, 4}), 2), (Placement{{1, 2}}));
  EXPECT_EQ(PlaceRanks(Agents({8, 2, 4}), 3), (Placement{{2, 3}}));
  EXPECT_EQ(PlaceRanks(Agents({8, 2, 4}), 8), (Placement{{0, 8}}));
  EXPECT_EQ(PlaceRanks(Agents({8, 2, 4}), 1), (Placement{{1, 1}}));
}

TEST(PlacementTest, OneNodeTiesGoToTheEarliest) {
  EXPECT_EQ(PlaceRanks(Agents({4, 4, 4}), 3), (Placement{{0, 3}}));
  EXPECT_EQ(PlaceRanks(Agents({1, 3, 3}), 2), (Placement{{1, 2}}));
}

TEST(PlacementTest, SpansTheFewestNodesLargestFirst) {
  // 7 ranks over free {2, 3, 1, 3}: the two 3s, then 1 of the 2.
  EXPECT_EQ(PlaceRanks(Agents({2, 3, 1, 3}), 7), (Placement{{1, 3}, {3, 3}, {0, 1}}));
  EXPECT_EQ(PlaceRanks(Agents({2, 3, 1, 3}), 9), (Placement{{1, 3}, {3, 3}, {0, 2}, {2, 1}}));
  // The last agent gets only the remainder.
  EXPECT_EQ(PlaceRanks(Agents({4, 4}), 5), (Placement{{0, 4}, {1, 1}}));
}

TEST(PlacementTest, TwoSingleSlotAgents) {
  EXPECT_EQ(PlaceRanks(Agents({1, 1}), 2), (Placement{{0, 1}, {1, 1}}));
}

TEST(PlacementTest, SkipsFullAgents) {
  EXPECT_EQ(PlaceRanks(Agents({0, 1, 0, 1}), 2), (Placement{{1, 1}, {3, 1}}));
  EXPECT_EQ(PlaceRanks(Agents({0, 2}), 2), (Placement{{1, 2}}));
  EXPECT_EQ(PlaceRanks(Agents({-3, 1, 1}), 2), (Placement{{1, 1}, {2, 1}}));
}

TEST(PlacementTest, NothingWhenTheSlotsDoNotSuffice) {
  EXPECT_EQ(PlaceRanks(Agents({1, 2}), 4), std::nullopt);
  EXPECT_EQ(PlaceRanks(Agents({}), 1), std::nullopt);
  EXPECT_EQ(PlaceRanks(Agents({0, 0}), 1), std::nullopt);
  EXPECT_EQ(PlaceRanks(Agents({-5, 3}), 4), std::nullopt);
}

TEST(PlacementTest, NothingForWorldSizeBelowOne) {
  EXPECT_EQ(PlaceRanks(Agents({4}), 0), std::nullopt);
  EXPECT_EQ(PlaceRanks(Agents({4}), -1), std::nullopt);
}

TEST(PlacementTest, CoversEveryRankExactlyOnce) {
  const std::vector<int> free = {3, 1, 4, 1, 5, 9, 2, 6};
  for (int w = 1; w <= 31; ++w) {
    auto placement = PlaceRanks(Agents(free), w);
    ASSERT_TRUE(placement.has_value()) << w;
    int total = 0;
    std::vector<bool> used(free.size(), false);
    for (const auto& [index, ranks] : *placement) {
      ASSERT_LT(index, free.size());
      EXPECT_FALSE(used[index]) << "agent used twice for w=" << w;
      used[index] = true;
      EXPECT_GE(ranks, 1);
      EXPECT_LE(ranks, free[index]);
      total += ranks;
    }
    EXPECT_EQ(total, w);
  }
  EXPECT_EQ(PlaceRanks(Agents(free), 32), std::nullopt);
}

// Trials sharing GPUs (trials_per_gpu N hold kSlotUnits / N): the agent with the most free
// units that holds them, so that trials spread over GPUs before they double up.
TEST(PlacementTest, SharedRunsSpreadOverTheFreestAgent) {
  auto units = [](std::vector<int> free) {
    std::vector<PlacementCandidate> out;
    for (size_t i = 0; i < free.size(); ++i) out.push_back({"a" + std::to_string(i), 0, free[i]});
    return out;
  };
  const int quarter = kSlotUnits / 4;
  EXPECT_EQ(PlaceShared(units({kSlotUnits, 2 * kSlotUnits}), quarter), std::optional<size_t>(1));
  EXPECT_EQ(PlaceShared(units({3 * quarter, quarter}), quarter), std::optional<size_t>(0));
  EXPECT_EQ(PlaceShared(units({quarter, quarter}), quarter), std::optional<size_t>(0));  // ties
  EXPECT_EQ(PlaceShared(units({quarter - 1, 0}), quarter), std::nullopt);
  EXPECT_EQ(PlaceShared(units({}), quarter), std::nullopt);
  // An agent of CPU slots gives such a run a whole slot: its cores are not shared.
  std::vector<PlacementCandidate> cpu = units({3 * quarter, kSlotUnits});
  cpu[0].gpus = false;
  cpu[1].gpus = false;
  EXPECT_EQ(PlaceShared({cpu[0]}, quarter), std::nullopt);
  EXPECT_EQ(PlaceShared(cpu, quarter), std::optional<size_t>(1));
  EXPECT_EQ(PlaceShared({cpu[0], units({quarter})[0]}, quarter), std::optional<size_t>(1));
  // kSlotUnits / N is exact for N up to 8: N trials of one sweep fill a GPU, no more.
  for (int n = 1; n <= 8; ++n) EXPECT_EQ(kSlotUnits % n, 0) << n;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
