// trainer/distributed/trial_group.h: which offers agree, and, with two real processes over Gloo
// (forked, each a warm worker that keeps groups), a sequence of trials on fresh rendezvous ports:
//   1 new group; 2 the same ranks again: reused; 3 the ranks swapped: a new group (each drops
//   the one it kept); 4 swapped again: reused; 5 a trial that fails (closed by neither rank):
//   aborted, not kept; 6 a new group again; 7 one worker no longer keeps (as one that retired
//   and was replaced): a new group, its peer says it dropped its own.
// In every trial an all-reduce over the group gives the sum of both ranks' values.
#include "trainer/distributed/trial_group.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "absl/strings/str_cat.h"
#include "comm/endpoint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;

TEST(TrialGroupOffersTest, AllRanksMustOfferOneGroupAtTheirOwnRank) {
  EXPECT_TRUE(TrialGroup::OffersAgree({"g1:2:nccl:600000@0", "g1:2:nccl:600000@1"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({"g1:2:nccl:600000@0", "none"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({"none", "none"}));
  // Swapped ranks: the same group, but each at the other's rank.
  EXPECT_FALSE(TrialGroup::OffersAgree({"g1:2:nccl:600000@1", "g1:2:nccl:600000@0"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({"g1:2:nccl:600000@0", "g2:2:nccl:600000@1"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({"g1:2:nccl:600000@0", "g1:2:nccl:300000@1"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({"g1:2:nccl:600000@0", "g1:2:nccl:600000@x"}));
  EXPECT_FALSE(TrialGroup::OffersAgree({}));
  EXPECT_TRUE(TrialGroup::OffersAgree({"g1:1:gloo:1000@0"}));
}

struct Trial {
  int port;
  bool swapped;    // worker w runs rank 1 - w
  bool fails;      // neither rank closes the group
  bool one_stops;  // worker 1 turns keeping off first
};

// One worker's trials; each line of `out`: "TRIAL reused|new SUM DESCRIPTION".
int RunWorker(int worker, const std::vector<Trial>& trials, const std::string& out) {
  std::ofstream log(out);
  KeepTrialGroups(true);
  for (size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    if (t.one_stops && worker == 1) KeepTrialGroups(false);
    comm::DistEnv env;
    env.world_size = 2;
    env.rank = t.swapped ? 1 - worker : worker;
    env.master_addr = "127.0.0.1";
    env.master_port = t.port;
    auto group =
        TrialGroup::Open(env, comm::ProcessGroup::Backend::kGloo, std::chrono::seconds(30));
    if (!group.ok()) {
      log << i + 1 << " error " << group.status().message() << std::endl;
      return 1;
    }
    torch::Tensor x = torch::full({1}, static_cast<float>(env.rank + 1));
    if (!(*group)->get()->AllReduceSum(x).ok()) return 1;
    log << i + 1 << " " << ((*group)->reused() ? "reused" : "new") << " " << x.item<float>() << " "
        << (*group)->description() << std::endl;
    if (!t.fails && !(*group)->Close().ok()) return 1;
    if (t.one_stops && worker == 1) KeepTrialGroups(true);
  }
  KeepTrialGroups(false);
  return 0;
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TrialGroupTest, TwoWorkersReuseTheirGroupOnlyWhenEveryRankKeepsIt) {
  if (!comm::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "this LibTorch has no Gloo";
  std::vector<Trial> trials;
  for (int i = 0; i < 7; ++i) {
    auto port = comm::FreeTcpPort("127.0.0.1");
    ASSERT_TRUE(port.ok()) << port.status();
    trials.push_back({*port, i == 2 || i == 3, i == 4, i == 6});
  }
  const std::string dir = ::testing::TempDir();
  std::vector<pid_t> pids;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(RunWorker(w, trials, absl::StrCat(dir, "/trial_group_", w, ".txt")));
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker status " << status;
  }
  for (int w = 0; w < 2; ++w) {
    const std::vector<std::string> lines = Lines(absl::StrCat(dir, "/trial_group_", w, ".txt"));
    ASSERT_EQ(lines.size(), 7u) << "worker " << w;
    const char* expected[] = {"1 new 3 ", "2 reused 3 ", "3 new 3 ", "4 reused 3 ",
                              "5 new 3 ", "6 new 3 ",    "7 new 3 "};
    for (int i = 0; i < 7; ++i) {
      EXPECT_THAT(lines[i], HasSubstr(expected[i])) << "worker " << w;
    }
    EXPECT_THAT(lines[0], HasSubstr("gloo, 2 ranks: a new group, connected in"));
    EXPECT_THAT(lines[1], HasSubstr("the workers' group from their previous trial, reused"));
    // Trial 3: each worker kept trial 2's group, at the other rank.
    EXPECT_THAT(lines[2], HasSubstr("previous group dropped"));
    // Trial 5 failed: nothing kept, nothing to drop.
    EXPECT_THAT(lines[5], ::testing::Not(HasSubstr("dropped")));
  }
  // Trial 7: worker 0 kept trial 6's group, worker 1 had let it go.
  EXPECT_THAT(Lines(absl::StrCat(dir, "/trial_group_0.txt"))[6], HasSubstr("dropped"));
  EXPECT_THAT(Lines(absl::StrCat(dir, "/trial_group_1.txt"))[6],
              ::testing::Not(HasSubstr("dropped")));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
