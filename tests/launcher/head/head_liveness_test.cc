// The head's liveness: agents and clients that fall silent are lost, with their runs failed or
// kept for the client to claim again, and the cluster's shrinking fails the queued runs that no
// longer fit. The fixture: head_fixture.h.
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head/head.h"
#include "tests/launcher/head/head_fixture.h"

namespace tunefleet {
namespace launcher {
namespace {

using comm::Envelope;

// Dispatch checks runs against the cluster's size incrementally (only new runs while the total
// stays the same, the whole queue again when it changes): both paths, in queue order.
TEST_F(HeadTest, FailsQueuedRunsThatNoLongerFitWhenTheClusterShrinks) {
  StartFastHead();
  auto a = Agent("a", 2);
  auto b = Agent("b", 2);
  auto client = Client();
  client->Send(SubmitMessage(1, 4));  // a and b
  a->Expect(Envelope::kAssign, {b.get(), client.get()});
  b->Expect(Envelope::kAssign, {a.get(), client.get()});
  client->Send(SubmitMessage(2, 3));  // fits 4 slots: queued
  client->Send(SubmitMessage(3, 1));  // queued behind it (strict FIFO)
  client->Send(SubmitMessage(4, 5));  // never fits
  Envelope exit = client->Expect(Envelope::kExit, {a.get(), b.get()});
  EXPECT_EQ(exit.exit().trial(), 4);
  EXPECT_EQ(exit.exit().reason(), "needs 5 ranks but the cluster has 4 slots");

  // a falls silent: run 1 fails, and run 2 no longer fits the 2 slots left.
  exit = client->Expect(Envelope::kExit, {b.get()});
  EXPECT_EQ(exit.exit().trial(), 1);
  EXPECT_EQ(exit.exit().reason(), "agent a lost (no heartbeat for 150 ms)");
  exit = client->Expect(Envelope::kExit, {b.get()});
  EXPECT_EQ(exit.exit().trial(), 2);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.exit().reason(), "needs 3 ranks but the cluster has 2 slots");
  EXPECT_EQ(b->Expect(Envelope::kCancel, {client.get()}).cancel().run_id(), 1u);
  b->Send(ExitMessage(1, 1, comm::Exit::CANCELLED));
  EXPECT_EQ(b->Expect(Envelope::kAssign, {client.get()}).assign().trial().trial(), 3);
  client->ExpectNothing(absl::Milliseconds(1));
}

TEST_F(HeadTest, LosesASilentAgentAndFailsItsRuns) {
  StartFastHead();
  auto a = Agent("a", 1);
  auto b = Agent("b", 1);
  auto client = Client();
  client->Send(SubmitMessage(5, 2));
  a->Expect(Envelope::kAssign, {b.get(), client.get()});
  b->Expect(Envelope::kAssign, {a.get(), client.get()});

  // From now on only b and the client heartbeat.
  Envelope exit = client->Expect(Envelope::kExit, {b.get()});
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.exit().agent(), "a");
  EXPECT_EQ(exit.exit().reason(), "agent a lost (no heartbeat for 150 ms)");
  EXPECT_EQ(b->Expect(Envelope::kCancel, {client.get()}).cancel().run_id(), 1u);

  // b's ranks hold its slot until b exits; then a new run fits on b alone.
  client->Send(SubmitMessage(6, 1));
  b->ExpectNothing(absl::Milliseconds(1));
  b->Send(ExitMessage(1, 5, comm::Exit::CANCELLED));
  Envelope assign = b->Expect(Envelope::kAssign, {client.get()});
  EXPECT_EQ(assign.assign().trial().trial(), 6);
  client->ExpectNothing(absl::Milliseconds(1));
  comm::Status status = GetStatus(*client, {b.get()});
  ASSERT_EQ(status.agents_size(), 1);
  EXPECT_EQ(status.agents(0).name(), "b");

  // A new agent may take the lost one's name.
  auto again = NewPeer();
  again->Send(RegisterMessage(comm::AGENT, "a", 1));
  again->Expect(Envelope::kWelcome, {b.get(), client.get()});
}

// A silent client's running trial waits client_grace for it; unclaimed, it is cancelled.
TEST_F(HeadTest, LosesASilentClientAndCancelsItsRunsAfterItsGrace) {
  Head::Options options;
  options.heartbeat_interval = absl::Milliseconds(50);
  options.client_grace = absl::Milliseconds(300);
  StartHead(options);
  auto [agent, client] = TwoTrialsOnOneSlot();
  agent->Expect(Envelope::kAssign, {client.get()});
  const absl::Time silent = absl::Now();
  Envelope cancel = agent->Expect(Envelope::kCancel, {agent.get()});  // the client fell silent
  EXPECT_GE(absl::Now() - silent, absl::Milliseconds(300));
  EXPECT_EQ(cancel.cancel().run_id(), 1u);
  EXPECT_EQ(cancel.cancel().reason(),
            "client hpo did not register again within 300 ms of its loss");
  agent->Send(ExitMessage(1, 1, comm::Exit::CANCELLED));
  // The queued run went with its client: nothing more is assigned.
  std::optional<Envelope> next = agent->Receive(absl::Milliseconds(300), {agent.get()});
  EXPECT_FALSE(next.has_value()) << next->DebugString();
  // The agent is still registered (it kept heartbeating).
  auto client2 = Client("other");
  EXPECT_EQ(GetStatus(*client2).agents_size(), 1);
}

// A client that missed its heartbeats (a starved hpo) hears "register first" at its next
// message, registers again and submits its trials again: the running one is its own still,
// with what the agent said meanwhile; the queued one was dropped and is queued anew.
TEST_F(HeadTest, AClientThatMissedHeartbeatsRegistersAgainAndKeepsItsRuns) {
  StartFastHead();  // client_grace: 30 s
  auto [agent, client] = TwoTrialsOnOneSlot();
  agent->Expect(Envelope::kAssign, {client.get()});
  // Silent for 300 ms (lost after 150): the agent's report for it is held.
  const absl::Time until = absl::Now() + absl::Milliseconds(300);
  while (absl::Now() < until) {
    agent->Heartbeat();
    absl::SleepFor(absl::Milliseconds(20));
  }
  Envelope report;
  report.mutable_report()->set_run_id(1);
  report.mutable_report()->set_trial(1);
  report.mutable_report()->set_step(7);
  agent->Send(report);
  agent->ExpectNothing(absl::Milliseconds(100));  // no Cancel

  client->Heartbeat();
  Envelope refused = client->Expect(Envelope::kRefused, {agent.get()});
  EXPECT_EQ(refused.refused().reason(), comm::kRefusedRegisterFirst);
  client->Send(RegisterMessage(comm::CLIENT, "hpo"));
  // (Receive heartbeats the client too: each of those heartbeats was refused as well.)
  std::optional<Envelope> welcome;
  do {
    welcome = client->Receive(absl::Seconds(5), {agent.get()});
  } while (welcome.has_value() && welcome->has_refused());
  ASSERT_TRUE(welcome.has_value() && welcome->has_welcome());
  client->Send(ResubmitMessage(1, 1));
  client->Send(ResubmitMessage(2, 1));
  Envelope held = client->Expect(Envelope::kReport, {agent.get()});
  EXPECT_EQ(held.report().run_id(), 1u);
  EXPECT_EQ(held.report().step(), 7);

  // Its Decisions and the run's Exit reach it again; then trial 2 runs.
  agent->Send(ExitMessage(1, 1, comm::Exit::COMPLETED));
  Envelope exit = client->Expect(Envelope::kExit, {agent.get()});
  EXPECT_EQ(exit.exit().trial(), 1);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::COMPLETED);
  EXPECT_EQ(agent->Expect(Envelope::kAssign, {client.get()}).assign().trial().trial(), 2);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
