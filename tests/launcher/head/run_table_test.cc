// RunTable (launcher/head/run_table.h) on its own: run ids, the FIFO queue, a client's runs,
// placed parts and their busy slots, the Exit aggregate, adoption and orphans.
#include "launcher/head/run_table.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head/placement.h"

namespace tunefleet {
namespace launcher {
namespace {

comm::TrialSpec Trial(int64_t trial, int world_size = 1, const std::string& client = "hpo") {
  comm::TrialSpec spec;
  spec.set_trial(trial);
  spec.set_world_size(world_size);
  spec.set_client(client);
  return spec;
}

RunPart Part(const std::string& agent, std::vector<int> ranks) {
  RunPart part;
  part.agent = agent;
  part.agent_name = agent + "-name";
  part.ranks = std::move(ranks);
  return part;
}

comm::Exit ExitWith(comm::Exit::Outcome outcome, const std::string& reason = "") {
  comm::Exit exit;
  exit.set_outcome(outcome);
  exit.set_reason(reason);
  return exit;
}

comm::HeldRun Held(uint64_t run_id, int64_t trial, int world_size, std::vector<int> ranks) {
  comm::HeldRun held;
  *held.mutable_trial() = Trial(trial, world_size);
  held.mutable_trial()->set_run_id(run_id);
  for (int r : ranks) held.add_ranks(r);
  held.set_master_addr("10.0.0.1");
  held.set_master_port(29507);
  return held;
}

TEST(RunTableTest, SubmitCountsRunIdsFromTheBaseAndQueuesInOrder) {
  RunTable table(100);
  RunRecord& a = table.Submit(Trial(7), "c1");
  RunRecord& b = table.Submit(Trial(8), "c1");
  EXPECT_EQ(a.run_id, 100u);
  EXPECT_EQ(a.spec.run_id(), 100u);
  EXPECT_EQ(b.run_id, 101u);
  EXPECT_TRUE(a.queued);
  EXPECT_EQ(a.client, "c1");
  EXPECT_EQ(table.queue(), (std::deque<uint64_t>{100, 101}));
  EXPECT_EQ(table.Find(101), &b);
  EXPECT_EQ(table.Find(102), nullptr);
}

TEST(RunTableTest, FindForClientByRunIdOrLatestRunOfTheTrial) {
  RunTable table;
  const uint64_t first = table.Submit(Trial(3), "c1").run_id;
  const uint64_t again = table.Submit(Trial(3), "c1").run_id;
  const uint64_t other = table.Submit(Trial(3), "c2").run_id;
  EXPECT_EQ(table.FindForClient("c1", first, 3)->run_id, first);
  EXPECT_EQ(table.FindForClient("c1", 0, 3)->run_id, again);  // the latest of trial 3
  // Another client's run_id is not c1's: c1's latest of the trial instead.
  EXPECT_EQ(table.FindForClient("c1", other, 3)->run_id, again);
  EXPECT_EQ(table.FindForClient("c1", 0, 4), nullptr);
  EXPECT_EQ(table.FindForClient("c3", 0, 3), nullptr);
  EXPECT_EQ(table.RunsOfClient("c1"), (std::vector<uint64_t>{first, again}));
}

TEST(RunTableTest, PlaceTakesTheRunOffTheQueueAndMakesItsSlotsBusy) {
  RunTable table;
  const uint64_t a = table.Submit(Trial(1, 3), "c").run_id;
  const uint64_t b = table.Submit(Trial(2, 1), "c").run_id;
  const uint64_t c = table.Submit(Trial(3, 1), "c").run_id;
  // Out of FIFO order (the middle one) as well as the front.
  table.Place(*table.Find(b), {Part("x", {0})}, "10.0.0.2", 0);
  EXPECT_EQ(table.queue(), (std::deque<uint64_t>{a, c}));
  table.Place(*table.Find(a), {Part("x", {0, 1}), Part("y", {2})}, "10.0.0.2", 29501);
  EXPECT_EQ(table.queue(), (std::deque<uint64_t>{c}));

  const RunRecord& run = *table.Find(a);
  EXPECT_FALSE(run.queued);
  EXPECT_EQ(run.master_addr, "10.0.0.2");
  EXPECT_EQ(run.master_port, 29501);
  ASSERT_EQ(run.parts.size(), 2u);
  EXPECT_EQ(table.BusySlots("x"), 3);
  EXPECT_EQ(table.BusyUnits("x"), 3 * kSlotUnits);
  EXPECT_EQ(table.BusySlots("y"), 1);
  EXPECT_EQ(table.BusySlots("z"), 0);
  EXPECT_EQ(table.RunsOnAgent("x"), (std::vector<uint64_t>{a, b}));
  EXPECT_EQ(table.RunsOnAgent("y"), (std::vector<uint64_t>{a}));
}

TEST(RunTableTest, RecordExitEndsThePartOnceAndFreesItsSlots) {
  RunTable table;
  RunRecord& run = table.Submit(Trial(1, 3), "c");
  table.Place(run, {Part("x", {0, 1}), Part("y", {2})}, "h", 29500);
  EXPECT_TRUE(table.RecordExit(run, "y", ExitWith(comm::Exit::COMPLETED)));
  EXPECT_FALSE(table.RecordExit(run, "y", ExitWith(comm::Exit::COMPLETED)));  // ended already
  EXPECT_FALSE(table.RecordExit(run, "z", ExitWith(comm::Exit::COMPLETED)));  // not its agent
  EXPECT_EQ(table.BusySlots("y"), 0);
  EXPECT_EQ(table.BusySlots("x"), 2);
  EXPECT_TRUE(table.RunsOnAgent("y").empty());
  EXPECT_FALSE(run.AllEnded());
  EXPECT_EQ(run.LivePart("y"), nullptr);
  ASSERT_NE(run.LivePart("x"), nullptr);
  EXPECT_TRUE(table.RecordExit(run, "x", ExitWith(comm::Exit::COMPLETED)));
  EXPECT_TRUE(run.AllEnded());
  EXPECT_EQ(table.BusySlots("x"), 0);
}

TEST(RunTableTest, AggregateFirstFailureThenCancelledThenStoppedElseCompleted) {
  RunTable table;
  RunRecord& run = table.Submit(Trial(5, 4), "c");
  table.Place(run, {Part("a", {0}), Part("b", {1}), Part("c", {2}), Part("d", {3})}, "h", 1);
  EXPECT_EQ(run.Aggregate().outcome(), comm::Exit::COMPLETED);
  table.RecordExit(run, "a", ExitWith(comm::Exit::STOPPED));
  EXPECT_EQ(run.Aggregate().outcome(), comm::Exit::STOPPED);
  table.RecordExit(run, "b", ExitWith(comm::Exit::CANCELLED));
  EXPECT_EQ(run.Aggregate().outcome(), comm::Exit::CANCELLED);
  comm::Exit failed = ExitWith(comm::Exit::FAILED, "exit code 1");
  failed.set_fetch_token("secret");
  table.RecordExit(run, "c", failed);
  table.RecordExit(run, "d", ExitWith(comm::Exit::FAILED, "exit code 9"));

  const comm::Exit exit = run.Aggregate();
  EXPECT_EQ(exit.outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.reason(), "exit code 1");  // the first failure, not the last
  EXPECT_EQ(exit.agent(), "c-name");        // filled in from its part
  EXPECT_EQ(exit.run_id(), run.run_id);
  EXPECT_EQ(exit.trial(), 5);
  EXPECT_TRUE(exit.fetch_token().empty());  // never relayed to the client
}

TEST(RunTableTest, RunUnitsShareAGpuOnlyForOneRankOnGpus) {
  comm::TrialSpec shared = Trial(1, 1);
  shared.set_trials_per_gpu(4);
  EXPECT_EQ(RunUnits(shared, 1), kSlotUnits / 4);
  EXPECT_EQ(RunUnits(shared, 1, /*gpus=*/false), kSlotUnits);
  EXPECT_EQ(RunUnits(Trial(1, 1), 1), kSlotUnits);
  comm::TrialSpec wide = Trial(1, 2);
  wide.set_trials_per_gpu(4);
  EXPECT_EQ(RunUnits(wide, 2), 2 * kSlotUnits);

  RunTable table;
  for (int t = 0; t < 3; ++t) {
    RunRecord& run = table.Submit(shared, "c");
    table.Place(run, {Part("g", {0})}, "h", 0);
  }
  EXPECT_EQ(table.BusyUnits("g"), 3 * kSlotUnits / 4);
  EXPECT_EQ(table.BusySlots("g"), 1);  // rounded up
}

TEST(RunTableTest, EraseDropsTheRunFromQueueAndClient) {
  RunTable table;
  const uint64_t a = table.Submit(Trial(1), "c").run_id;
  const uint64_t b = table.Submit(Trial(2), "c").run_id;
  table.Erase(a);
  EXPECT_EQ(table.Find(a), nullptr);
  EXPECT_EQ(table.queue(), (std::deque<uint64_t>{b}));
  EXPECT_EQ(table.FindForClient("c", a, 1), nullptr);
  table.Erase(a);  // twice: nothing
  EXPECT_EQ(table.runs().size(), 1u);

  RunRecord& run = *table.Find(b);
  table.DetachClient(run);
  EXPECT_TRUE(run.client.empty());
  EXPECT_EQ(table.FindForClient("c", 0, 2), nullptr);
  EXPECT_TRUE(table.RunsOfClient("c").empty());
}

TEST(RunTableTest, AdoptRebuildsAnOrphanWithPartsInRankOrder) {
  RunTable table;
  const absl::Time until = absl::FromUnixSeconds(1000);
  // The part of ranks 2-3 registers before rank 0's.
  RunRecord* run = table.Adopt(Held(40, 6, 4, {3, 2}), "id-b", "b", until, true);
  ASSERT_NE(run, nullptr);
  EXPECT_TRUE(run->adopted);
  EXPECT_FALSE(run->queued);
  EXPECT_TRUE(run->client.empty());
  EXPECT_EQ(run->orphan_until, until);
  EXPECT_EQ(run->master_addr, "10.0.0.1");
  EXPECT_EQ(run->master_port, 29507);
  ASSERT_NE(table.Adopt(Held(40, 6, 4, {0, 1}), "id-a", "a", until, true), nullptr);
  ASSERT_EQ(run->parts.size(), 2u);
  EXPECT_EQ(run->parts[0].agent_name, "a");
  EXPECT_EQ(run->parts[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(table.BusySlots("id-a"), 2);
  // A repeated Register of the same agent adds nothing.
  EXPECT_EQ(table.Adopt(Held(40, 6, 4, {0, 1}), "id-a2", "a", until, true), nullptr);
  EXPECT_EQ(table.BusySlots("id-a2"), 0);
  // Run ids go on after the adopted one.
  EXPECT_EQ(table.Submit(Trial(7), "c").run_id, 41u);
}

TEST(RunTableTest, AnOrphanIsFoundByClientNameUntilAttached) {
  RunTable table;
  RunRecord* run = table.Adopt(Held(9, 2, 1, {0}), "id-a", "a", absl::InfiniteFuture(), true);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(table.FindOrphan("hpo", 2), run);
  EXPECT_EQ(table.FindOrphan("hpo", 3), nullptr);
  EXPECT_EQ(table.FindOrphan("other", 2), nullptr);
  table.AttachClient(*run, "client-id");
  EXPECT_EQ(run->client, "client-id");
  EXPECT_EQ(table.FindOrphan("hpo", 2), nullptr);
  EXPECT_EQ(table.FindForClient("client-id", 0, 2), run);
}

TEST(RunTableTest, ALostClientsRunsBecomeOrphansThatExpire) {
  RunTable table;
  RunRecord& run = table.Submit(Trial(4), "client-id");
  table.Place(run, {Part("x", {0})}, "h", 0);
  const absl::Time until = absl::FromUnixSeconds(500);
  table.Orphan(run, until);
  EXPECT_TRUE(run.client.empty());
  EXPECT_TRUE(run.client_lost);
  EXPECT_TRUE(run.adopted);
  EXPECT_EQ(table.FindForClient("client-id", 0, 4), nullptr);
  EXPECT_EQ(table.FindOrphan("hpo", 4), &run);  // by the client's registered name
  EXPECT_TRUE(table.OrphansExpired(until - absl::Seconds(1)).empty());
  EXPECT_EQ(table.OrphansExpired(until), (std::vector<uint64_t>{run.run_id}));
  table.ForgetOrphan(run);
  EXPECT_EQ(table.FindOrphan("hpo", 4), nullptr);
  EXPECT_TRUE(table.OrphansExpired(until).empty());
  EXPECT_NE(table.Find(run.run_id), nullptr);  // still running on x
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
