// Dispatcher (launcher/head/dispatcher.h) over real tables and a recording head: strict FIFO
// placement, the Assign each agent gets, shared GPUs, and runs larger than the cluster.
#include "launcher/head/dispatcher.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head/peer_table.h"
#include "launcher/head/run_table.h"
#include "launcher/hosts_file.h"
#include "tests/launcher/head/recording_head_actions.h"

namespace tunefleet {
namespace launcher {
namespace {

class DispatcherTest : public ::testing::Test {
 protected:
  explicit DispatcherTest(std::vector<HostEntry> hosts = {})
      : peers_(std::move(hosts), "hosts", absl::Seconds(1)),
        head_(runs_),
        dispatcher_(peers_, runs_, head_) {}

  void AddAgent(const std::string& name, int slots, int gpus = 0) {
    comm::Register reg;
    reg.set_role(comm::AGENT);
    reg.set_name(name);
    reg.set_slots(slots);
    reg.set_address("addr-" + name);
    for (int g = 0; g < gpus; ++g) reg.add_gpus("GPU");
    peers_.Upsert("id-" + name, reg, absl::FromUnixSeconds(1000));
  }

  uint64_t Submit(int world_size, int trials_per_gpu = 0) {
    comm::TrialSpec spec;
    spec.set_trial(static_cast<int64_t>(runs_.runs().size()));
    spec.set_world_size(world_size);
    spec.set_trials_per_gpu(trials_per_gpu);
    return runs_.Submit(spec, "client").run_id;
  }

  PeerTable peers_;
  RunTable runs_;
  RecordingHeadActions head_;
  Dispatcher dispatcher_;
};

TEST_F(DispatcherTest, NoAgentsNothingMoves) {
  const uint64_t run = Submit(1);
  dispatcher_.Dispatch();
  EXPECT_EQ(runs_.queue(), (std::deque<uint64_t>{run}));
  EXPECT_TRUE(head_.sent.empty());
  EXPECT_TRUE(head_.failed.empty());
}

TEST_F(DispatcherTest, OneAgentRunGetsOneAssignAndAnAutoPort) {
  AddAgent("a", 4);
  const uint64_t id = Submit(2);
  dispatcher_.Dispatch();
  EXPECT_TRUE(runs_.queue().empty());
  const std::vector<comm::Envelope> sent = head_.SentTo("id-a");
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_TRUE(sent[0].has_assign());
  const comm::Assign& assign = sent[0].assign();
  EXPECT_EQ(assign.trial().run_id(), id);
  EXPECT_EQ(std::vector<int>(assign.ranks().begin(), assign.ranks().end()),
            (std::vector<int>{0, 1}));
  EXPECT_EQ(assign.master_addr(), "addr-a");
  EXPECT_EQ(assign.master_port(), 0);  // the agent picks
  EXPECT_EQ(assign.group_rank(), 0);
  EXPECT_EQ(assign.group_count(), 1);
  EXPECT_EQ(runs_.BusySlots("id-a"), 2);
  EXPECT_EQ(runs_.Find(id)->parts[0].agent_name, "a");
}

TEST_F(DispatcherTest, RunOverTwoAgentsRank0OnTheFirstAndAFixedPort) {
  AddAgent("a", 2);
  AddAgent("b", 2);
  const uint64_t id = Submit(4);
  dispatcher_.Dispatch();
  ASSERT_EQ(head_.sent.size(), 2u);
  const comm::Assign& first = head_.sent[0].second.assign();
  const comm::Assign& second = head_.sent[1].second.assign();
  EXPECT_EQ(first.ranks(0), 0);
  EXPECT_EQ(second.ranks(0), 2);
  EXPECT_EQ(first.group_rank(), 0);
  EXPECT_EQ(second.group_rank(), 1);
  EXPECT_EQ(second.group_count(), 2);
  const std::string rank0_agent = head_.sent[0].first;
  EXPECT_EQ(first.master_addr(), "addr-" + rank0_agent.substr(3));
  EXPECT_EQ(second.master_addr(), first.master_addr());
  EXPECT_EQ(first.master_port(), 29500 + static_cast<int>(id % 2000));
  EXPECT_EQ(runs_.Find(id)->master_port, first.master_port());
}

TEST_F(DispatcherTest, StrictFifoALaterSmallRunWaitsBehindTheFirst) {
  AddAgent("a", 2);
  AddAgent("b", 2);
  const uint64_t wide = Submit(2);
  const uint64_t blocked = Submit(3);  // 2 slots left: does not fit now, but could later
  const uint64_t small = Submit(1);    // would fit, but waits its turn
  dispatcher_.Dispatch();
  EXPECT_EQ(runs_.queue(), (std::deque<uint64_t>{blocked, small}));
  ASSERT_EQ(head_.sent.size(), 1u);
  EXPECT_EQ(head_.sent[0].second.assign().trial().run_id(), wide);
  EXPECT_TRUE(head_.failed.empty());

  // The first run ends: both waiting runs go.
  RunRecord& run = *runs_.Find(wide);
  comm::Exit exit;
  exit.set_outcome(comm::Exit::COMPLETED);
  runs_.RecordExit(run, run.parts[0].agent, exit);
  dispatcher_.Dispatch();
  EXPECT_TRUE(runs_.queue().empty());
  EXPECT_EQ(head_.sent.size(), 1u + 2u + 1u);  // blocked over two agents, then small
}

TEST_F(DispatcherTest, ARunLargerThanTheClusterFailsAndTheNextOneRuns) {
  AddAgent("a", 2);
  const uint64_t huge = Submit(3);
  const uint64_t next = Submit(1);
  dispatcher_.Dispatch();
  ASSERT_EQ(head_.failed.size(), 1u);
  EXPECT_EQ(head_.failed[0].run_id, huge);
  EXPECT_EQ(head_.failed[0].reason, "needs 3 ranks but the cluster has 2 slots");
  EXPECT_EQ(head_.failed[0].cause, comm::Exit::CLUSTER_TOO_SMALL);
  EXPECT_EQ(runs_.Find(huge), nullptr);
  EXPECT_TRUE(runs_.queue().empty());
  EXPECT_FALSE(runs_.Find(next)->queued);
}

TEST_F(DispatcherTest, OneRankRunsShareAGpuUpToTrialsPerGpu) {
  AddAgent("g", 1, /*gpus=*/1);
  const uint64_t a = Submit(1, 2);
  const uint64_t b = Submit(1, 2);
  const uint64_t c = Submit(1, 2);
  dispatcher_.Dispatch();
  EXPECT_FALSE(runs_.Find(a)->queued);
  EXPECT_FALSE(runs_.Find(b)->queued);
  EXPECT_EQ(runs_.queue(), (std::deque<uint64_t>{c}));
  EXPECT_EQ(runs_.BusySlots("id-g"), 1);
  EXPECT_TRUE(head_.failed.empty());
}

class DispatcherHostsTest : public DispatcherTest {
 protected:
  DispatcherHostsTest() : DispatcherTest({HostEntry{"a"}, HostEntry{"b"}}) {}
};

TEST_F(DispatcherHostsTest, TooBigWaitsUntilEveryListedHostRegistered) {
  AddAgent("a", 2);
  const uint64_t id = Submit(3);
  dispatcher_.Dispatch();
  EXPECT_TRUE(head_.failed.empty());  // b may still come with more slots
  EXPECT_EQ(runs_.queue(), (std::deque<uint64_t>{id}));
  AddAgent("b", 2);
  dispatcher_.Dispatch();
  EXPECT_TRUE(head_.failed.empty());
  EXPECT_TRUE(runs_.queue().empty());  // 4 slots now: placed
}

TEST_F(DispatcherHostsTest, TooBigFailsOnceTheClusterIsComplete) {
  AddAgent("a", 1);
  AddAgent("b", 1);
  Submit(3);
  dispatcher_.Dispatch();
  ASSERT_EQ(head_.failed.size(), 1u);
  EXPECT_EQ(head_.failed[0].reason, "needs 3 ranks but the cluster has 2 slots");
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
