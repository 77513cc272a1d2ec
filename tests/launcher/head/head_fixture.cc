#include "tests/launcher/head/head_fixture.h"

#include <utility>

namespace tunefleet {
namespace launcher {

using comm::Envelope;

Envelope RegisterMessage(comm::Role role, const std::string& name, int slots,
                         const std::string& address) {
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

Envelope ResubmitMessage(int64_t trial, int world_size) {
  Envelope envelope = SubmitMessage(trial, world_size);
  envelope.mutable_submit()->set_resubmit(true);
  return envelope;
}

Envelope ExitMessage(uint64_t run_id, int64_t trial, comm::Exit::Outcome outcome, int rank,
                     int exit_code, const std::string& reason) {
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

void HeadTest::StartHead(Head::Options options) {
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

void HeadTest::StartFastHead() {
  Head::Options options;
  options.heartbeat_interval = absl::Milliseconds(50);
  StartHead(options);
}

void HeadTest::TearDown() {
  if (thread_.joinable()) {
    head_->Stop();
    thread_.join();
  }
  EXPECT_TRUE(result_.ok()) << result_;
}

std::unique_ptr<FakePeer> HeadTest::NewPeer() {
  return std::make_unique<FakePeer>(context_, endpoint_);
}

std::unique_ptr<FakePeer> HeadTest::Agent(const std::string& name, int slots,
                                          const std::string& address) {
  auto peer = NewPeer();
  peer->Send(
      RegisterMessage(comm::AGENT, name, slots, address.empty() ? "10.0.0." + name : address));
  peer->Expect(Envelope::kWelcome);
  return peer;
}

std::unique_ptr<FakePeer> HeadTest::Client(const std::string& name) {
  auto peer = NewPeer();
  peer->Send(RegisterMessage(comm::CLIENT, name));
  peer->Expect(Envelope::kWelcome);
  return peer;
}

HeadTest::TwoTrials HeadTest::TwoTrialsOnOneSlot() {
  TwoTrials peers{Agent("a", 1), Client()};
  peers.client->Send(SubmitMessage(1, 1));
  peers.client->Send(SubmitMessage(2, 1));
  return peers;
}

comm::Status HeadTest::GetStatus(FakePeer& peer, const std::vector<FakePeer*>& keep_alive) {
  Envelope request;
  request.mutable_status_request();
  peer.Send(request);
  return peer.Expect(Envelope::kStatus, keep_alive).status();
}

}  // namespace launcher
}  // namespace tunefleet
