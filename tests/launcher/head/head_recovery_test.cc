// HeadRecovery (launcher/head/head_recovery.h) over real tables and a recording head: agents'
// held runs adopted after a restart or cancelled by the head that lost them, resubmitted trials
// given back, held for the window or run again, and orphans nobody claims.
#include "launcher/head/head_recovery.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/clock.h"
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

constexpr char kSession[] = "session-2";

comm::HeldRun Held(uint64_t run_id, int64_t trial, std::vector<int> ranks, int world_size) {
  comm::HeldRun held;
  held.mutable_trial()->set_run_id(run_id);
  held.mutable_trial()->set_trial(trial);
  held.mutable_trial()->set_world_size(world_size);
  held.mutable_trial()->set_client("hpo");
  for (int r : ranks) held.add_ranks(r);
  return held;
}

comm::Register AgentWith(const std::string& name, std::vector<comm::HeldRun> runs,
                         const std::string& previous_session = "session-1") {
  comm::Register reg;
  reg.set_role(comm::AGENT);
  reg.set_name(name);
  reg.set_slots(4);
  reg.set_previous_session(previous_session);
  for (comm::HeldRun& run : runs) *reg.add_runs() = std::move(run);
  return reg;
}

comm::TrialSpec Resubmitted(int64_t trial) {
  comm::TrialSpec spec;
  spec.set_trial(trial);
  spec.set_world_size(1);
  spec.set_client("hpo");
  return spec;
}

class HeadRecoveryTest : public ::testing::Test {
 protected:
  HeadRecoveryTest()
      : deadline_(absl::Now() + absl::Seconds(30)),
        peers_({}, "", absl::Seconds(1)),
        head_(runs_),
        recovery_(peers_, runs_, head_, kSession, deadline_, absl::Seconds(60), absl::Seconds(20)) {
    comm::Register client;
    client.set_role(comm::CLIENT);
    client.set_name("hpo");
    peers_.Upsert("client-id", client, absl::Now());
  }

  const absl::Time deadline_;
  PeerTable peers_;
  RunTable runs_;
  RecordingHeadActions head_;
  HeadRecovery recovery_;
};

TEST_F(HeadRecoveryTest, HeldRunsOfARestartAreAdoptedAsOrphansWithTheirReports) {
  comm::HeldRun held = Held(17, 3, {0}, 1);
  held.add_pending_reports()->set_step(5);
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {held}));
  RunRecord* run = runs_.FindOrphan("hpo", 3);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->run_id, 17u);
  EXPECT_GE(run->orphan_until, deadline_ + absl::Seconds(60));
  ASSERT_EQ(run->held.size(), 1u);  // no client yet: held for it
  EXPECT_EQ(run->held[0].report().step(), 5);
  EXPECT_TRUE(head_.sent.empty());
  EXPECT_EQ(runs_.BusySlots("agent-id"), 1);
}

TEST_F(HeadRecoveryTest, AResubmittedTrialGetsItsOrphanAndWhatWasHeld) {
  comm::HeldRun held = Held(17, 3, {0}, 1);
  held.add_pending_reports()->set_step(5);
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {held}));
  comm::TrialSpec spec = Resubmitted(3);
  EXPECT_TRUE(recovery_.Resubmit("client-id", &spec));
  const std::vector<comm::Envelope> sent = head_.SentTo("client-id");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].report().step(), 5);
  RunRecord* run = runs_.Find(17);
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->client, "client-id");
  EXPECT_TRUE(run->held.empty());
  EXPECT_EQ(runs_.FindOrphan("hpo", 3), nullptr);
  // Submitted again while it runs: this head has it.
  comm::TrialSpec again = Resubmitted(3);
  EXPECT_TRUE(recovery_.Resubmit("client-id", &again));
  EXPECT_EQ(runs_.runs().size(), 1u);
}

TEST_F(HeadRecoveryTest, AnEndedAdoptedRunIsReportedWhenItsClientComesBack) {
  comm::HeldRun held = Held(17, 3, {0}, 1);
  held.set_ended(true);
  held.mutable_exit()->set_outcome(comm::Exit::STOPPED);
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {held}));
  ASSERT_NE(runs_.Find(17), nullptr);  // kept for its client
  EXPECT_TRUE(head_.reported.empty());
  comm::TrialSpec spec = Resubmitted(3);
  EXPECT_TRUE(recovery_.Resubmit("client-id", &spec));
  ASSERT_EQ(head_.reported.size(), 1u);
  EXPECT_EQ(head_.reported[0].client, "client-id");
  EXPECT_EQ(head_.reported[0].exit.outcome(), comm::Exit::STOPPED);
  EXPECT_EQ(runs_.Find(17), nullptr);
}

TEST_F(HeadRecoveryTest, AFailedPartCancelsTheOtherAgentsParts) {
  recovery_.AdoptHeldRuns("id-b", AgentWith("b", {Held(20, 1, {1}, 2)}));
  comm::HeldRun failed = Held(20, 1, {0}, 2);
  failed.set_ended(true);
  failed.mutable_exit()->set_outcome(comm::Exit::FAILED);
  failed.mutable_exit()->set_rank(0);
  recovery_.AdoptHeldRuns("id-a", AgentWith("a", {failed}));
  ASSERT_EQ(head_.cancelled.size(), 1u);
  EXPECT_EQ(head_.cancelled[0].run_id, 20u);
  EXPECT_EQ(head_.cancelled[0].reason, "rank 0 on agent a failed");
  EXPECT_EQ(head_.cancelled[0].except, "id-a");
  EXPECT_TRUE(runs_.Find(20)->cancel_sent);
}

TEST_F(HeadRecoveryTest, AnAgentOfThisSessionGetsCancelsForRunsTheHeadNoLongerHas) {
  comm::HeldRun ended = Held(5, 2, {0}, 1);
  ended.set_ended(true);
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {Held(4, 1, {0}, 1), ended}, kSession));
  const std::vector<comm::Envelope> sent = head_.SentTo("agent-id");
  ASSERT_EQ(sent.size(), 1u);  // none for the run that ended there anyway
  EXPECT_EQ(sent[0].cancel().run_id(), 4u);
  EXPECT_EQ(sent[0].cancel().trial(), 1);
  EXPECT_EQ(sent[0].cancel().reason(), "the head failed this run when it lost the agent");
  EXPECT_TRUE(runs_.runs().empty());  // nothing adopted
}

TEST_F(HeadRecoveryTest, ATrialNoAgentHoldsWaitsForTheWindowThenRunsAgain) {
  comm::TrialSpec spec = Resubmitted(8);
  EXPECT_TRUE(recovery_.Resubmit("client-id", &spec));  // held for the window
  EXPECT_TRUE(runs_.runs().empty());
  recovery_.Tick(deadline_ - absl::Seconds(1));
  EXPECT_TRUE(runs_.runs().empty());
  EXPECT_EQ(head_.dispatches, 0);

  recovery_.Tick(deadline_);
  ASSERT_EQ(runs_.queue().size(), 1u);
  const RunRecord& run = *runs_.Find(runs_.queue().front());
  EXPECT_EQ(run.spec.trial(), 8);
  EXPECT_EQ(run.client, "client-id");
  EXPECT_EQ(head_.staged, (std::vector<uint64_t>{run.run_id}));
  EXPECT_EQ(head_.dispatches, 1);
  // After the window a resubmission nobody holds is a new submission for the head.
  comm::TrialSpec later = Resubmitted(9);
  EXPECT_FALSE(recovery_.Resubmit("client-id", &later));
}

TEST_F(HeadRecoveryTest, AHeldResubmissionFindsTheRunAnAgentBroughtMeanwhile) {
  comm::TrialSpec spec = Resubmitted(3);
  EXPECT_TRUE(recovery_.Resubmit("client-id", &spec));
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {Held(17, 3, {0}, 1)}));
  recovery_.Tick(deadline_);
  EXPECT_TRUE(runs_.queue().empty());  // not run again
  EXPECT_EQ(runs_.Find(17)->client, "client-id");
}

TEST_F(HeadRecoveryTest, UnclaimedOrphansAreCancelledOrErased) {
  recovery_.AdoptHeldRuns("agent-id", AgentWith("n1", {Held(17, 3, {0}, 1)}));
  const absl::Time until = runs_.Find(17)->orphan_until;
  recovery_.Tick(until - absl::Seconds(1));
  EXPECT_TRUE(head_.cancelled.empty());
  recovery_.Tick(until);
  ASSERT_EQ(head_.cancelled.size(), 1u);
  EXPECT_EQ(head_.cancelled[0].reason, "no client claimed it within 60 s of the head's restart");
  EXPECT_TRUE(runs_.Find(17)->reported);
  EXPECT_EQ(runs_.FindOrphan("hpo", 3), nullptr);

  // A lost client's run that has ended meanwhile is simply erased.
  RunRecord& run = runs_.Submit(Resubmitted(4), "client-id");
  runs_.Place(run, {RunPart{"agent-id", "n1", {0}}}, "h", 0);
  const uint64_t id = run.run_id;
  runs_.Orphan(run, until);
  comm::Exit exit;
  runs_.RecordExit(run, "agent-id", exit);
  recovery_.Tick(until);
  EXPECT_EQ(runs_.Find(id), nullptr);
  EXPECT_EQ(head_.cancelled.size(), 1u);
}

TEST_F(HeadRecoveryTest, ALostClientsOrphanSaysWhyItIsCancelled) {
  RunRecord& run = runs_.Submit(Resubmitted(4), "client-id");
  runs_.Place(run, {RunPart{"agent-id", "n1", {0}}}, "h", 0);
  runs_.Orphan(run, deadline_);
  recovery_.Tick(deadline_);
  ASSERT_EQ(head_.cancelled.size(), 1u);
  EXPECT_EQ(head_.cancelled[0].reason, "client hpo did not register again within 20 s of its loss");
}

TEST(HeadRecoveryHostsTest, TheWindowClosesEarlyOnceEveryListedHostRegistered) {
  PeerTable peers({HostEntry{"n1"}}, "hosts", absl::Seconds(1));
  RunTable runs;
  RecordingHeadActions head(runs);
  const absl::Time far = absl::Now() + absl::Hours(1);
  HeadRecovery recovery(peers, runs, head, kSession, far, absl::Seconds(60), absl::Seconds(20));
  recovery.Tick(absl::Now());
  EXPECT_EQ(head.dispatches, 0);  // n1 may still bring runs
  comm::Register agent;
  agent.set_role(comm::AGENT);
  agent.set_name("n1");
  agent.set_slots(1);
  peers.Upsert("id-n1", agent, absl::Now());
  recovery.Tick(absl::Now());
  EXPECT_EQ(head.dispatches, 1);
  comm::TrialSpec spec = Resubmitted(1);
  EXPECT_FALSE(recovery.Resubmit("client-id", &spec));  // the window is closed
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
