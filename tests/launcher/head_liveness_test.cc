// The head's liveness: agents and clients that fall silent are lost, with their runs failed or
// cancelled, and the cluster's shrinking fails the queued runs that no longer fit. The fixture:
// head_fixture.h.
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head.h"
#include "tests/launcher/head_fixture.h"

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

TEST_F(HeadTest, LosesASilentClientAndCancelsItsRuns) {
  StartFastHead();
  auto [agent, client] = TwoTrialsOnOneSlot();
  agent->Expect(Envelope::kAssign, {client.get()});
  Envelope cancel = agent->Expect(Envelope::kCancel, {agent.get()});  // the client fell silent
  EXPECT_EQ(cancel.cancel().run_id(), 1u);
  EXPECT_TRUE(absl::StrContains(cancel.cancel().reason(), "client hpo lost")) << cancel.cancel().reason();
  agent->Send(ExitMessage(1, 1, comm::Exit::CANCELLED));
  // The queued run went with its client: nothing more is assigned.
  std::optional<Envelope> next = agent->Receive(absl::Milliseconds(300), {agent.get()});
  EXPECT_FALSE(next.has_value()) << next->DebugString();
  // The agent is still registered (it kept heartbeating).
  auto client2 = Client("other");
  EXPECT_EQ(GetStatus(*client2).agents_size(), 1);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
