// common/rank_env.h against torchrun. PyTorch's elastic agent (torch/distributed/elastic/agent/
// server/local_elastic_agent.py, LocalElasticAgent._start_workers, read at pytorch/pytorch
// commit 001077cb, a 2.x main; its 1.x form, as in the LibTorch 1.13 this repository links, has
// the same names but NCCL_ASYNC_ERROR_HANDLING) sets, for each worker:
//   RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
//   GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_NAME, ROLE_WORLD_SIZE,
//   TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_MAX_RESTARTS, TORCHELASTIC_RUN_ID,
//   TORCHELASTIC_USE_AGENT_STORE, and TORCH_NCCL_ASYNC_ERROR_HANDLING,
// with, for `torchrun --nnodes=N --nproc_per_node=P --node_rank=G` (static rendezvous, one
// role): RANK = G * P + local rank, WORLD_SIZE = N * P, LOCAL_WORLD_SIZE = P, GROUP_RANK = G,
// GROUP_WORLD_SIZE = N. TorchrunEnv writes the first eight with those values.
#include "common/rank_env.h"

#include <set>
#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// The variables torchrun's agent sets for every worker (see above).
const std::set<std::string>& TorchrunNames() {
  static const std::set<std::string> names = {"RANK",
                                              "LOCAL_RANK",
                                              "WORLD_SIZE",
                                              "LOCAL_WORLD_SIZE",
                                              "MASTER_ADDR",
                                              "MASTER_PORT",
                                              "GROUP_RANK",
                                              "GROUP_WORLD_SIZE",
                                              "ROLE_RANK",
                                              "ROLE_NAME",
                                              "ROLE_WORLD_SIZE",
                                              "TORCHELASTIC_RESTART_COUNT",
                                              "TORCHELASTIC_MAX_RESTARTS",
                                              "TORCHELASTIC_RUN_ID",
                                              "TORCHELASTIC_USE_AGENT_STORE"};
  return names;
}

TEST(RankEnvTest, WritesTheProcessGroupPartOfTorchrunsEnvironment) {
  RankPlace place;
  place.master_addr = "10.0.0.1";
  place.master_port = 29500;
  const std::map<std::string, std::string> env = TorchrunEnv(place);
  const std::set<std::string> expected = {
      "RANK",        "LOCAL_RANK",  "WORLD_SIZE", "LOCAL_WORLD_SIZE",
      "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK", "GROUP_WORLD_SIZE"};
  std::set<std::string> names;
  for (const auto& [name, value] : env) {
    names.insert(name);
    EXPECT_TRUE(TorchrunNames().count(name)) << name << " is not a variable torchrun sets";
  }
  EXPECT_EQ(names, expected);
}

TEST(RankEnvTest, MatchesTorchrunsValuesOnTwoNodesOfTwo) {
  // torchrun --nnodes=2 --nproc_per_node=2 --master_addr=10.0.0.1 --master_port=29500, on the
  // node with --node_rank=1: its workers are global ranks 2 and 3.
  constexpr int kNodes = 2, kPerNode = 2, kNodeRank = 1;
  for (int local = 0; local < kPerNode; ++local) {
    RankPlace place;
    place.rank = kNodeRank * kPerNode + local;
    place.local_rank = local;
    place.world_size = kNodes * kPerNode;
    place.local_world_size = kPerNode;
    place.master_addr = "10.0.0.1";
    place.master_port = 29500;
    place.group_rank = kNodeRank;
    place.group_world_size = kNodes;
    const std::map<std::string, std::string> env = TorchrunEnv(place);
    EXPECT_EQ(env.at("GROUP_RANK"), "1");
    EXPECT_EQ(env.at("GROUP_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("RANK"), std::to_string(2 + local));
    EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(local));
    EXPECT_EQ(env.at("WORLD_SIZE"), "4");
    EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("MASTER_ADDR"), "10.0.0.1");
    EXPECT_EQ(env.at("MASTER_PORT"), "29500");
  }
}

TEST(RankEnvTest, OneMachineRanksAreTheirOwnLocalRanks) {
  // torchrun --standalone --nproc_per_node=3, as trainer/distributed/local_ranks.h starts them.
  for (int i = 0; i < 3; ++i) {
    RankPlace place;
    place.rank = place.local_rank = i;
    place.world_size = place.local_world_size = 3;
    place.master_addr = "127.0.0.1";
    place.master_port = 40123;
    const std::map<std::string, std::string> env = TorchrunEnv(place);
    EXPECT_EQ(env.at("RANK"), env.at("LOCAL_RANK"));
    EXPECT_EQ(env.at("WORLD_SIZE"), env.at("LOCAL_WORLD_SIZE"));
    EXPECT_EQ(env.at("MASTER_PORT"), "40123");
  }
}

}  // namespace
}  // namespace tunefleet
