// The head's runs: routing between a client and the agents of a run, the FIFO queue, cancels,
// runs that never fit, and the aggregation of a multi-agent run's Exits. The fixture:
// head_fixture.h.
#include <cstdio>
#include <optional>
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

TEST_F(HeadTest, RoutesAOneAgentRun) {
  StartHead();
  auto agent = Agent("a", 2, "10.0.0.5");
  auto client = Client();
  client->Send(SubmitMessage(7, 1));

  Envelope assign = agent->Expect(Envelope::kAssign);
  EXPECT_EQ(assign.assign().trial().run_id(), 1u);
  EXPECT_EQ(assign.assign().trial().trial(), 7);
  EXPECT_EQ(assign.assign().trial().world_size(), 1);
  ASSERT_EQ(assign.assign().trial().argv_size(), 2);
  EXPECT_EQ(assign.assign().trial().argv(1), "--config=x.yaml");
  EXPECT_EQ(assign.assign().trial().env().at("A"), "1");
  ASSERT_EQ(assign.assign().ranks_size(), 1);
  EXPECT_EQ(assign.assign().ranks(0), 0);
  EXPECT_EQ(assign.assign().master_addr(), "10.0.0.5");
  EXPECT_EQ(assign.assign().master_port(), 0);

  Envelope started;
  started.mutable_started()->set_run_id(1);
  started.mutable_started()->set_trial(7);
  started.mutable_started()->set_agent("a");
  started.mutable_started()->add_pids(42);
  agent->Send(started);
  EXPECT_EQ(client->Expect(Envelope::kStarted).started().pids(0), 42);

  Envelope report;
  report.mutable_report()->set_run_id(1);
  report.mutable_report()->set_trial(7);
  report.mutable_report()->set_step(3);
  (*report.mutable_report()->mutable_metrics())["eval/spearman"] = 0.5;
  agent->Send(report);
  Envelope forwarded = client->Expect(Envelope::kReport);
  EXPECT_EQ(forwarded.report().step(), 3);
  EXPECT_EQ(forwarded.report().metrics().at("eval/spearman"), 0.5);

  comm::Status status = GetStatus(*client);
  ASSERT_EQ(status.runs_size(), 1);
  EXPECT_FALSE(status.runs(0).queued());
  EXPECT_EQ(status.runs(0).agents(0), "a");
  EXPECT_EQ(status.agents(0).free_slots(), 1);

  Envelope decision;
  decision.mutable_decision()->set_trial(7);  // by trial number; the head fills run_id
  decision.mutable_decision()->set_step(3);
  decision.mutable_decision()->set_action(comm::Decision::STOP);
  client->Send(decision);
  Envelope delivered = agent->Expect(Envelope::kDecision);
  EXPECT_EQ(delivered.decision().run_id(), 1u);
  EXPECT_EQ(delivered.decision().action(), comm::Decision::STOP);

  agent->Send(ExitMessage(1, 7, comm::Exit::STOPPED));
  Envelope exit = client->Expect(Envelope::kExit);
  EXPECT_EQ(exit.exit().run_id(), 1u);
  EXPECT_EQ(exit.exit().trial(), 7);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::STOPPED);
  EXPECT_EQ(GetStatus(*client).runs_size(), 0);
}

TEST_F(HeadTest, ForwardsAFloodOfReportsInOrder) {
  StartHead();
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  agent->Expect(Envelope::kAssign);
  constexpr int kReports = 20000;
  const absl::Time start = absl::Now();
  Envelope report;
  report.mutable_report()->set_run_id(1);
  report.mutable_report()->set_trial(1);
  (*report.mutable_report()->mutable_metrics())["train/loss"] = 1.0;
  for (int i = 1; i <= kReports; ++i) {
    report.mutable_report()->set_step(i);
    agent->Send(report);
  }
  for (int i = 1; i <= kReports; ++i) {
    std::optional<Envelope> got = client->Receive();
    ASSERT_TRUE(got.has_value() && got->has_report()) << "report " << i;
    ASSERT_EQ(got->report().step(), i);
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("forwarded %d reports in %.3f s (%.0f/s, send and receive in this test included)\n",
              kReports, seconds, kReports / seconds);
}

TEST_F(HeadTest, SpansTwoAgentsAndAggregatesAFailure) {
  StartHead();
  auto a = Agent("a", 1, "10.0.0.1");
  auto b = Agent("b", 1, "10.0.0.2");
  auto client = Client();
  client->Send(SubmitMessage(3, 2));

  Envelope assign_a = a->Expect(Envelope::kAssign);
  Envelope assign_b = b->Expect(Envelope::kAssign);
  ASSERT_EQ(assign_a.assign().ranks_size(), 1);
  ASSERT_EQ(assign_b.assign().ranks_size(), 1);
  EXPECT_EQ(assign_a.assign().ranks(0), 0);
  EXPECT_EQ(assign_b.assign().ranks(0), 1);
  EXPECT_EQ(assign_a.assign().master_addr(), "10.0.0.1");
  EXPECT_EQ(assign_b.assign().master_addr(), "10.0.0.1");
  EXPECT_EQ(assign_a.assign().master_port(), 29501);
  EXPECT_EQ(assign_b.assign().master_port(), 29501);

  Envelope decision;
  decision.mutable_decision()->set_trial(3);
  client->Send(decision);
  a->Expect(Envelope::kDecision);  // the agent with rank 0
  b->ExpectNothing(absl::Milliseconds(100));

  Envelope failed =
      ExitMessage(1, 3, comm::Exit::FAILED, /*rank=*/1, /*exit_code=*/1, "rank 1: exit code 1");
  failed.mutable_exit()->set_stderr_tail("CUDA out of memory");
  b->Send(failed);
  Envelope cancel = a->Expect(Envelope::kCancel);
  EXPECT_EQ(cancel.cancel().run_id(), 1u);
  EXPECT_EQ(cancel.cancel().trial(), 3);
  client->ExpectNothing(absl::Milliseconds(100));  // not before every part exited

  a->Send(ExitMessage(1, 3, comm::Exit::CANCELLED, 0, 0, "another rank failed"));
  Envelope exit = client->Expect(Envelope::kExit);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.exit().rank(), 1);
  EXPECT_EQ(exit.exit().exit_code(), 1);
  EXPECT_EQ(exit.exit().agent(), "b");
  EXPECT_EQ(exit.exit().stderr_tail(), "CUDA out of memory");
  EXPECT_EQ(exit.exit().reason(), "rank 1: exit code 1");
  client->ExpectNothing(absl::Milliseconds(100));  // exactly one Exit
}

TEST_F(HeadTest, QueuesWhenBusyAndDispatchesWhenSlotsFree) {
  StartHead();
  auto [agent, client] = TwoTrialsOnOneSlot();
  EXPECT_EQ(agent->Expect(Envelope::kAssign).assign().trial().trial(), 1);
  agent->ExpectNothing();

  comm::Status status = GetStatus(*client);
  ASSERT_EQ(status.runs_size(), 2);
  EXPECT_FALSE(status.runs(0).queued());
  EXPECT_TRUE(status.runs(1).queued());
  EXPECT_EQ(status.agents(0).free_slots(), 0);

  agent->Send(ExitMessage(1, 1, comm::Exit::COMPLETED));
  EXPECT_EQ(client->Expect(Envelope::kExit).exit().outcome(), comm::Exit::COMPLETED);
  Envelope next = agent->Expect(Envelope::kAssign);
  EXPECT_EQ(next.assign().trial().trial(), 2);
  EXPECT_EQ(next.assign().trial().run_id(), 2u);
}

TEST_F(HeadTest, CancelsQueuedAndRunningRuns) {
  StartHead();
  auto [agent, client] = TwoTrialsOnOneSlot();
  agent->Expect(Envelope::kAssign);

  Envelope cancel;
  cancel.mutable_cancel()->set_trial(2);
  client->Send(cancel);
  Envelope exit = client->Expect(Envelope::kExit);
  EXPECT_EQ(exit.exit().trial(), 2);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::CANCELLED);

  cancel.mutable_cancel()->set_trial(1);
  client->Send(cancel);
  Envelope to_agent = agent->Expect(Envelope::kCancel);
  EXPECT_EQ(to_agent.cancel().run_id(), 1u);
  agent->Send(ExitMessage(1, 1, comm::Exit::CANCELLED));
  EXPECT_EQ(client->Expect(Envelope::kExit).exit().outcome(), comm::Exit::CANCELLED);
  agent->ExpectNothing();  // the cancelled queued run is gone
}

TEST_F(HeadTest, FailsRunsThatCanNeverBePlaced) {
  StartHead();
  auto client = Client();
  client->Send(SubmitMessage(1, 3));
  client->ExpectNothing();  // no agent yet: it waits
  auto agent = Agent("a", 2);
  Envelope exit = client->Expect(Envelope::kExit);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.exit().reason(), "needs 3 ranks but the cluster has 2 slots");

  client->Send(SubmitMessage(2, 0));
  exit = client->Expect(Envelope::kExit);
  EXPECT_EQ(exit.exit().outcome(), comm::Exit::FAILED);
  EXPECT_EQ(exit.exit().trial(), 2);
  agent->ExpectNothing();
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
