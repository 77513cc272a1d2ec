// trainer/distributed/local_ranks.h with /bin/sh as the rank binary: the torchrun environment each
// rank gets, a failed rank ending the others (its exit code or 128 + its signal), the GPU ids.
#include "trainer/distributed/local_ranks.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

LocalRanksSpec Shell(int ranks, const std::string& script) {
  LocalRanksSpec spec;
  spec.binary = "/bin/sh";
  spec.args = {"-c", script};
  spec.ranks = ranks;
  spec.grace = std::chrono::milliseconds(2000);
  return spec;
}

TEST(LocalRanksTest, EachRankGetsTheTorchrunEnvironment) {
  // Every rank checks its own variables; any mismatch is a failed rank.
  EXPECT_EQ(RunLocalRanks(Shell(3,
                                "test \"$WORLD_SIZE\" = 3 && test \"$LOCAL_WORLD_SIZE\" = 3 && "
                                "test \"$LOCAL_RANK\" = \"$RANK\" && test \"$RANK\" -lt 3 && "
                                "test \"$MASTER_ADDR\" = 127.0.0.1 && "
                                "test \"$MASTER_PORT\" -gt 0 && "
                                "test \"$TUNEFLEET_LOCAL_RANKS\" = 1"),
                          "test"),
            0);
}

TEST(LocalRanksTest, AFailedRankEndsTheOthersWithItsExitCode) {
  const auto start = std::chrono::steady_clock::now();
  // Rank 1 fails; rank 0 would sleep for a minute.
  EXPECT_EQ(RunLocalRanks(Shell(2, "if [ \"$RANK\" = 1 ]; then exit 7; fi; exec sleep 60"), "test"),
            7);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LocalRanksTest, ASignalledRankGives128PlusTheSignal) {
  EXPECT_EQ(
      RunLocalRanks(Shell(2, "if [ \"$RANK\" = 0 ]; then kill -9 $$; fi; exec sleep 60"), "test"),
      128 + 9);
}

TEST(LocalRanksTest, ARankThatIgnoresSigtermIsKilledAfterTheGrace) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RunLocalRanks(Shell(2,
                                "trap '' TERM; if [ \"$RANK\" = 1 ]; then exit 3; fi; "
                                "while :; do sleep 0.1; done"),
                          "test"),
            3);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(1900));
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(LocalRanksTest, RankGpusNamesTheListedOrTheFirstGpus) {
  const std::vector<std::string> visible = {"4", "5", "6", "7"};
  EXPECT_EQ(RankGpus(2, {}, visible), (std::vector<std::string>{"4", "5"}));
  EXPECT_EQ(RankGpus(2, {3, 1}, visible), (std::vector<std::string>{"7", "5"}));
  EXPECT_TRUE(RankGpus(2, {}, {}).empty());  // CPU ranks: CUDA_VISIBLE_DEVICES left alone
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
