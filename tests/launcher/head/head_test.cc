// The head's registration, refusals and shutdown: who may talk to it, how it answers strangers,
// malformed frames and other protocol versions, and how it stops. The fixture: head_fixture.h.
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "launcher/head/head.h"
#include "tests/launcher/head/head_fixture.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

using comm::Envelope;

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

TEST_F(HeadTest, ServesAnIpcEndpoint) {
  ShortTempDir dir("head-test");  // removed with the socket at the end
  ASSERT_FALSE(dir.path().empty());
  Head::Options options;
  options.bind = "ipc://" + JoinPath(dir.path(), "head.sock");
  StartHead(options);
  EXPECT_EQ(endpoint_, options.bind);
  auto agent = Agent("a", 1);
  auto client = Client();
  client->Send(SubmitMessage(1, 1));
  agent->Expect(Envelope::kAssign);
  head_->Stop();
  thread_.join();
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
