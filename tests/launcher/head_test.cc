// The head's protocol, end to end over real ZeroMQ sockets: a Head runs its poll loop on a
// background thread; fake agents and hpo clients are DEALER sockets driven by the test.
#include "launcher/head.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

using comm::Envelope;

// A DEALER peer of the head. Receive() skips the head's heartbeats and, while it waits, sends
// heartbeats for itself and for the peers in `keep_alive`.
class FakePeer {
 public:
  FakePeer(zmq::context_t& context, const std::string& endpoint)
      : socket_(context, zmq::socket_type::dealer) {
    comm::ConfigureSocket(socket_, /*router=*/false);
    socket_.connect(endpoint);
  }

  void Send(const Envelope& envelope) {
    absl::Status s = comm::Send(socket_, envelope);
    ASSERT_TRUE(s.ok()) << s;
  }
  void SendRaw(const std::string& bytes) { socket_.send(zmq::buffer(bytes), zmq::send_flags::none); }
  void Heartbeat() {
    Envelope hb;
    hb.mutable_heartbeat();
    Send(hb);
  }

  std::optional<Envelope> Receive(absl::Duration timeout = absl::Seconds(5),
                                  const std::vector<FakePeer*>& keep_alive = {}) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::Time next_beat = absl::Now();
    while (absl::Now() < deadline) {
      if (!keep_alive.empty() && absl::Now() >= next_beat) {
        Heartbeat();
        for (FakePeer* peer : keep_alive) peer->Heartbeat();
        next_beat = absl::Now() + absl::Milliseconds(10);
      }
      zmq::pollitem_t item = {static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(5));
      while (auto received = comm::TryReceive(socket_, /*router=*/false)) {
        if (!received->envelope.ok()) {
          ADD_FAILURE() << "bad frame from the head: " << received->envelope.status();
          continue;
        }
        if (received->envelope->has_heartbeat()) continue;
        return *std::move(received->envelope);
      }
    }
    return std::nullopt;
  }

  // The next message, which must have `body`.
  Envelope Expect(Envelope::BodyCase body, const std::vector<FakePeer*>& keep_alive = {}) {
    std::optional<Envelope> envelope = Receive(absl::Seconds(5), keep_alive);
    if (!envelope.has_value()) {
      ADD_FAILURE() << "no message (wanted body " << body << ")";
      return Envelope();
    }
    EXPECT_EQ(envelope->body_case(), body) << envelope->DebugString();
    return *envelope;
  }

  void ExpectNothing(absl::Duration wait = absl::Milliseconds(200)) {
    std::optional<Envelope> envelope = Receive(wait);
    EXPECT_FALSE(envelope.has_value()) << envelope->DebugString();
  }

 private:
  zmq::socket_t socket_;
};

Envelope RegisterMessage(comm::Role role, const std::string& name, int slots = 0,
                         const std::string& address = "") {
  Envelope envelope;
  comm::Register* reg = envelope.mutable_register_();
  reg->set_role(role);
  reg->set_name(name);
  reg->set_slots(slots);
  reg->set_address(address);
  reg->set_hostname(name + ".example");
  reg->set_pid(1234);
  return envelope;
}

Envelope SubmitMessage(int64_t trial, int world_size) {
  Envelope envelope;
  comm::TrialSpec* spec = envelope.mutable_submit()->mutable_trial();
  spec->set_trial(trial);
  spec->set_sweep("sweep");
  spec->set_world_size(world_size);
  spec->add_argv("train");
  spec->add_argv("--config=x.yaml");
  (*spec->mutable_env())["A"] = "1";
  return envelope;
}

Envelope ExitMessage(uint64_t run_id, int64_t trial, comm::Exit::Outcome outcome, int rank = 0,
                     int exit_code = 0, const std::string& reason = "") {
  Envelope envelope;
  comm::Exit* exit = envelope.mutable_exit();
  exit->set_run_id(run_id);
  exit->set_trial(trial);
  exit->set_outcome(outcome);
  exit->set_rank(rank);
  exit->set_exit_code(exit_code);
  exit->set_reason(reason);
  return envelope;
}

class HeadTest : public ::testing::Test {
 protected:
  void StartHead(Head::Options options = {}) {
    if (options.bind == Head::Options().bind) options.bind = "tcp://127.0.0.1:*";
    if (options.heartbeat_interval == Head::Options().heartbeat_interval) {
      options.heartbeat_interval = absl::Seconds(2);  // nobody is lost by accident
    }
    head_ = std::make_unique<Head>(options, /*signals=*/nullptr);
    absl::Status bound = head_->Bind();
    ASSERT_TRUE(bound.ok()) << bound;
    endpoint_ = head_->endpoint();
    thread_ = std::thread([this] { result_ = head_->Run(); });
  }

  void TearDown() override {
    if (thread_.joinable()) {
      head_->Stop();
      thread_.join();
    }
    EXPECT_TRUE(result_.ok()) << result_;
  }

  std::unique_ptr<FakePeer> NewPeer() { return std::make_unique<FakePeer>(context_, endpoint_); }

  // A registered agent or client (Welcome checked).
  std::unique_ptr<FakePeer> Agent(const std::string& name, int slots, const std::string& address = "") {
    auto peer = NewPeer();
    peer->Send(RegisterMessage(comm::AGENT, name, slots, address.empty() ? "10.0.0." + name : address));
    peer->Expect(Envelope::kWelcome);
    return peer;
  }
  std::unique_ptr<FakePeer> Client(const std::string& name = "hpo") {
    auto peer = NewPeer();
    peer->Send(RegisterMessage(comm::CLIENT, name));
    peer->Expect(Envelope::kWelcome);
    return peer;
  }

  comm::Status GetStatus(FakePeer& peer) {
    Envelope request;
    request.mutable_status_request();
    peer.Send(request);
    return peer.Expect(Envelope::kStatus).status();
  }

  zmq::context_t context_{1};
  std::unique_ptr<Head> head_;
  std::string endpoint_;
  std::thread thread_;
  absl::Status result_;
};

TEST_F(HeadTest, WelcomesAgentsAndClients) {
  StartHead();
  EXPECT_TRUE(absl::StartsWith(endpoint_, "tcp://127.0.0.1:")) << endpoint_;
  EXPECT_FALSE(absl::EndsWith(endpoint_, ":*"));

  auto agent = NewPeer();
  agent->Send(RegisterMessage(comm::AGENT, "a", 4, "10.0.0.1"));
  Envelope welcome = agent->Expect(Envelope::kWelcome);
  EXPECT_EQ(welcome.welcome().heartbeat_interval_ms(), 2000u);
  EXPECT_EQ(welcome.welcome().session().size(), 16u);

  auto client = NewPeer();
  client->Send(RegisterMessage(comm::CLIENT, "hpo"));
  EXPECT_EQ(client->Expect(Envelope::kWelcome).welcome().session(), welcome.welcome().session());

  comm::Status status = GetStatus(*client);
  ASSERT_EQ(status.agents_size(), 1);
  EXPECT_EQ(status.agents(0).name(), "a");
  EXPECT_EQ(status.agents(0).address(), "10.0.0.1");
  EXPECT_EQ(status.agents(0).slots(), 4);
  EXPECT_EQ(status.agents(0).free_slots(), 4);
  EXPECT_TRUE(status.agents(0).alive());
  EXPECT_EQ(status.runs_size(), 0);
}

TEST_F(HeadTest, RefusesPeersThatDidNotRegister) {
  StartHead();
  auto stranger = NewPeer();
  stranger->Heartbeat();
  EXPECT_EQ(stranger->Expect(Envelope::kRefused).refused().reason(), "register first");
  stranger->Send(SubmitMessage(1, 1));
  EXPECT_EQ(stranger->Expect(Envelope::kRefused).refused().reason(), "register first");
}

TEST_F(HeadTest, RefusesAnotherProtocolVersion) {
  StartHead();
  Envelope envelope = RegisterMessage(comm::CLIENT, "future");
  envelope.set_version(99);
  std::string bytes;
  ASSERT_TRUE(envelope.SerializeToString(&bytes));
  auto peer = NewPeer();
  peer->SendRaw(bytes);
  Envelope refused = peer->Expect(Envelope::kRefused);
  EXPECT_EQ(refused.refused().supported_version(), comm::kProtocolVersion);
  EXPECT_TRUE(absl::StrContains(refused.refused().reason(), "protocol version 99"))
      << refused.refused().reason();
}

TEST_F(HeadTest, DropsMalformedFramesAndKeepsServing) {
  StartHead();
  auto peer = NewPeer();
  peer->SendRaw(std::string("\xff\xff\xff\xff garbage", 13));
  peer->SendRaw(std::string(comm::kMaxFrameBytes + 10, 'x'));  // over the cap, under ZeroMQ's
  peer->ExpectNothing();
  peer->Send(RegisterMessage(comm::CLIENT, "hpo"));
  peer->Expect(Envelope::kWelcome);
}

TEST_F(HeadTest, RefusesADuplicateLiveAgentNameAndBadAgents) {
  StartHead();
  auto first = Agent("a", 1);
  auto second = NewPeer();
  second->Send(RegisterMessage(comm::AGENT, "a", 1));
  EXPECT_TRUE(absl::StrContains(second->Expect(Envelope::kRefused).refused().reason(),
                                "already registered"));
  second->Send(RegisterMessage(comm::AGENT, "b", 0));
  EXPECT_EQ(second->Expect(Envelope::kRefused).refused().reason(), "agent b offers no slots");
  // The same identity registering again replaces its own entry.
  first->Send(RegisterMessage(comm::AGENT, "a", 2));
  first->Expect(Envelope::kWelcome);
  auto client = Client();
  comm::Status status = GetStatus(*client);
  ASSERT_EQ(status.agents_size(), 1);
  EXPECT_EQ(status.agents(0).slots(), 2);
}

TEST_F(HeadTest, AcceptsOnlyAgentsInTheHostsFile) {
  Head::Options options;
  options.hosts = {{"gpu-1", 1, 1}, {"root@gpu-2", 0, 2}};
  StartHead(options);
  auto stranger = NewPeer();
  stranger->Send(RegisterMessage(comm::AGENT, "gpu-9", 4));
  EXPECT_EQ(stranger->Expect(Envelope::kRefused).refused().reason(),
            "agent gpu-9 is not in hosts.txt");
  auto second = Agent("gpu-2", 2);
  auto first = Agent("gpu-1", 4);  // capped to the hosts file's slots=1
  auto client = Client();
  comm::Status status = GetStatus(*client);
  ASSERT_EQ(status.agents_size(), 2);
  EXPECT_EQ(status.agents(0).name(), "gpu-1");  // hosts-file order
  EXPECT_EQ(status.agents(0).slots(), 1);
  EXPECT_EQ(status.agents(1).name(), "gpu-2");
}

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

  Envelope failed = ExitMessage(1, 3, comm::Exit::FAILED, /*rank=*/1, /*exit_code=*/1, "rank 1: exit code 1");
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
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  client->Send(SubmitMessage(2, 1));
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
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  client->Send(SubmitMessage(2, 1));
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

// Dispatch checks runs against the cluster's size incrementally (only new runs while the total
// stays the same, the whole queue again when it changes): both paths, in queue order.
TEST_F(HeadTest, FailsQueuedRunsThatNoLongerFitWhenTheClusterShrinks) {
  Head::Options options;
  options.heartbeat_interval = absl::Milliseconds(50);
  StartHead(options);
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
  Head::Options options;
  options.heartbeat_interval = absl::Milliseconds(50);
  StartHead(options);
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
  comm::Status status;
  {
    Envelope request;
    request.mutable_status_request();
    client->Send(request);
    status = client->Expect(Envelope::kStatus, {b.get()}).status();
  }
  ASSERT_EQ(status.agents_size(), 1);
  EXPECT_EQ(status.agents(0).name(), "b");

  // A new agent may take the lost one's name.
  auto again = NewPeer();
  again->Send(RegisterMessage(comm::AGENT, "a", 1));
  again->Expect(Envelope::kWelcome, {b.get(), client.get()});
}

TEST_F(HeadTest, LosesASilentClientAndCancelsItsRuns) {
  Head::Options options;
  options.heartbeat_interval = absl::Milliseconds(50);
  StartHead(options);
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  client->Send(SubmitMessage(2, 1));
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

TEST_F(HeadTest, ShutdownFromAClientStopsAgentsAndTheLoop) {
  StartHead();
  auto a = Agent("a", 1);
  auto b = Agent("b", 1);
  auto client = Client();
  Envelope shutdown;
  shutdown.mutable_shutdown()->set_reason("sweep finished");
  client->Send(shutdown);
  EXPECT_EQ(a->Expect(Envelope::kShutdown).shutdown().reason(), "sweep finished");
  b->Expect(Envelope::kShutdown);
  thread_.join();
  EXPECT_TRUE(result_.ok()) << result_;
}

TEST_F(HeadTest, StopFromAnotherThreadShutsAgentsDown) {
  StartHead();
  auto agent = Agent("a", 1);
  head_->Stop();
  agent->Expect(Envelope::kShutdown);
  thread_.join();
}

// What an agent that outlived a head says to the next one: a run it holds.
comm::HeldRun HeldRunOf(uint64_t run_id, int64_t trial, const std::string& client,
                        std::vector<int> ranks, int world_size) {
  comm::HeldRun held;
  comm::TrialSpec* spec = held.mutable_trial();
  spec->set_run_id(run_id);
  spec->set_trial(trial);
  spec->set_sweep("sweep");
  spec->set_world_size(world_size);
  spec->set_client(client);
  for (int r : ranks) held.add_ranks(r);
  held.set_master_addr("10.0.0.a");
  held.set_master_port(29600);
  return held;
}

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
  Envelope again = SubmitMessage(5, 2);
  again.mutable_submit()->set_resubmit(true);
  client->Send(again);
  Envelope report = client->Expect(Envelope::kReport, {a.get(), b.get()});
  EXPECT_EQ(report.report().step(), 20);
  Envelope decision;
  decision.mutable_decision()->set_trial(5);
  decision.mutable_decision()->set_step(20);
  client->Send(decision);
  EXPECT_EQ(a->Expect(Envelope::kDecision, {b.get(), client.get()}).decision().run_id(), 777u);
  // Trial 4 ended while the head was away: its Exit comes on its resubmission.
  Envelope again4 = SubmitMessage(4, 1);
  again4.mutable_submit()->set_resubmit(true);
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
  Envelope again = SubmitMessage(3, 1);
  again.mutable_submit()->set_resubmit(true);
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

TEST_F(HeadTest, RefusalsNameTheSession) {
  StartHead();
  auto agent = NewPeer();
  agent->Send(RegisterMessage(comm::AGENT, "a", 1));
  const std::string session = agent->Expect(Envelope::kWelcome).welcome().session();
  auto stranger = NewPeer();
  stranger->Heartbeat();
  Envelope refused = stranger->Expect(Envelope::kRefused);
  EXPECT_EQ(refused.refused().reason(), comm::kRefusedRegisterFirst);
  EXPECT_EQ(refused.refused().session(), session);
}

TEST_F(HeadTest, ServesAnIpcEndpoint) {
  char dir[] = "/tmp/tf-head-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  Head::Options options;
  options.bind = std::string("ipc://") + dir + "/head.sock";
  StartHead(options);
  EXPECT_EQ(endpoint_, options.bind);
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  agent->Expect(Envelope::kAssign);
  head_->Stop();
  thread_.join();
  ::unlink((std::string(dir) + "/head.sock").c_str());
  ::rmdir(dir);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
