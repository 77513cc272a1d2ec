// A head restart: runs that agents held across it are adopted and given back to the clients that
// submit them again; resubmissions nobody holds run again after the recovery window; an agent of
// the same session gets cancels for runs the head lost. The fixture: head_fixture.h.
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head/head.h"
#include "tests/launcher/head/head_fixture.h"

namespace tunefleet {
namespace launcher {
namespace {

using comm::Envelope;

TEST_F(HeadTest, RestartAdoptsHeldRunsAndGivesThemBackOnResubmit) {
  StartHead();
  // Two agents of a 2-rank run registering again with a new head (another session).
  Envelope reg_a = RegisterMessage(comm::AGENT, "a", 1, "10.0.0.a");
  reg_a.mutable_register_()->set_previous_session("0123456789abcdef");
  *reg_a.mutable_register_()->add_runs() = HeldRunOf(777, 5, "hpo", {0}, 2);
  comm::Report* pending = reg_a.mutable_register_()->mutable_runs(0)->add_pending_reports();
  pending->set_run_id(777);
  pending->set_trial(5);
  pending->set_step(20);
  (*pending->mutable_metrics())["m"] = 0.5;
  // A run that ended while the head was away, and a run of a client that never comes back.
  comm::HeldRun ended = HeldRunOf(776, 4, "hpo", {0}, 1);
  ended.set_ended(true);
  *ended.mutable_exit() = ExitMessage(776, 4, comm::Exit::COMPLETED).exit();
  *reg_a.mutable_register_()->add_runs() = ended;
  auto a = NewPeer();
  a->Send(reg_a);
  a->Expect(Envelope::kWelcome);
  Envelope reg_b = RegisterMessage(comm::AGENT, "b", 1, "10.0.0.b");
  reg_b.mutable_register_()->set_previous_session("0123456789abcdef");
  *reg_b.mutable_register_()->add_runs() = HeldRunOf(777, 5, "hpo", {1}, 2);
  auto b = NewPeer();
  b->Send(reg_b);
  b->Expect(Envelope::kWelcome);
  b->Send(reg_b);  // a repeated Register adds nothing
  b->Expect(Envelope::kWelcome);

  // The adopted run holds both agents' slots: a new 1-rank trial waits.
  auto client = Client("hpo");
  client->Send(SubmitMessage(9, 1));
  a->ExpectNothing();
  b->ExpectNothing();

  // hpo submits trial 5 again: it gets the held report, then decides; the decision reaches
  // rank 0's agent with the old run id.
  Envelope again = ResubmitMessage(5, 2);
  client->Send(again);
  Envelope report = client->Expect(Envelope::kReport, {a.get(), b.get()});
  EXPECT_EQ(report.report().step(), 20);
  Envelope decision;
  decision.mutable_decision()->set_trial(5);
  decision.mutable_decision()->set_step(20);
  client->Send(decision);
  EXPECT_EQ(a->Expect(Envelope::kDecision, {b.get(), client.get()}).decision().run_id(), 777u);
  // Trial 4 ended while the head was away: its Exit comes on its resubmission.
  Envelope again4 = ResubmitMessage(4, 1);
  client->Send(again4);
  Envelope exit4 = client->Expect(Envelope::kExit, {a.get(), b.get()});
  EXPECT_EQ(exit4.exit().trial(), 4);
  EXPECT_EQ(exit4.exit().outcome(), comm::Exit::COMPLETED);
  // The run ends on both agents: hpo gets one Exit, and trial 9 is placed at last.
  a->Send(ExitMessage(777, 5, comm::Exit::COMPLETED));
  b->Send(ExitMessage(777, 5, comm::Exit::COMPLETED, 1));
  Envelope exit5 = client->Expect(Envelope::kExit, {a.get(), b.get()});
  EXPECT_EQ(exit5.exit().run_id(), 777u);
  EXPECT_EQ(exit5.exit().outcome(), comm::Exit::COMPLETED);
  Envelope assign = a->Expect(Envelope::kAssign, {b.get(), client.get()});
  EXPECT_EQ(assign.assign().trial().trial(), 9);
  EXPECT_GT(assign.assign().trial().run_id(), 777u);  // never an id the agents hold
}

TEST_F(HeadTest, ResubmitNobodyHoldsRunsAfterTheRecoveryWindow) {
  Head::Options options;
  options.recovery_window = absl::Milliseconds(300);
  StartHead(options);
  auto a = Agent("a", 1);
  auto client = Client("hpo");
  Envelope again = ResubmitMessage(3, 1);
  const absl::Time sent = absl::Now();
  client->Send(again);
  Envelope assign = a->Expect(Envelope::kAssign, {client.get()});
  EXPECT_EQ(assign.assign().trial().trial(), 3);
  EXPECT_GE(absl::Now() - sent, absl::Milliseconds(250));  // held for the window
}

TEST_F(HeadTest, AgentOfTheSameSessionGetsCancelsForRunsItLost) {
  StartHead();
  auto first = NewPeer();
  first->Send(RegisterMessage(comm::AGENT, "a", 1));
  const std::string session = first->Expect(Envelope::kWelcome).welcome().session();
  // The agent registers again (new socket) claiming a run this head never placed there.
  Envelope reg = RegisterMessage(comm::AGENT, "a2", 1);
  reg.mutable_register_()->set_previous_session(session);
  *reg.mutable_register_()->add_runs() = HeldRunOf(42, 1, "hpo", {0}, 1);
  auto again = NewPeer();
  again->Send(reg);
  again->Expect(Envelope::kWelcome);
  EXPECT_EQ(again->Expect(Envelope::kCancel).cancel().run_id(), 42u);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
