// The head's protocol, end to end over real ZeroMQ sockets: HeadTest runs a Head's poll loop on
// a background thread, bound to tcp://127.0.0.1:* (any port), and makes fake agents and hpo
// clients (fake_peer.h) that the test drives; the messages below are what they send.
#ifndef TUNEFLEET_TESTS_LAUNCHER_HEAD_FIXTURE_H_
#define TUNEFLEET_TESTS_LAUNCHER_HEAD_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "gtest/gtest.h"
#include "launcher/head/head.h"
#include "tests/launcher/head/fake_peer.h"

namespace tunefleet {
namespace launcher {

// Register{role, name, slots, address}, host NAME.example, pid 1234.
comm::Envelope RegisterMessage(comm::Role role, const std::string& name, int slots = 0,
                               const std::string& address = "");
// Submit of a trial of sweep "sweep" (argv train --config=x.yaml, env A=1).
comm::Envelope SubmitMessage(int64_t trial, int world_size);
// The same, with Submit.resubmit set (a client that outlived its head).
comm::Envelope ResubmitMessage(int64_t trial, int world_size);
comm::Envelope ExitMessage(uint64_t run_id, int64_t trial, comm::Exit::Outcome outcome,
                           int rank = 0, int exit_code = 0, const std::string& reason = "");
// What an agent that outlived a head says to the next one: a run it holds.
comm::HeldRun HeldRunOf(uint64_t run_id, int64_t trial, const std::string& client,
                        std::vector<int> ranks, int world_size);

class HeadTest : public ::testing::Test {
 protected:
  // Starts the head; a default bind becomes tcp://127.0.0.1:*, a default heartbeat 2 s (so
  // that nobody is lost by accident).
  void StartHead(Head::Options options = {});
  // A head with a 50 ms heartbeat: a peer that falls silent is lost after 150 ms.
  void StartFastHead();
  // Stops the head (if a test has not) and checks that Run() returned OK.
  void TearDown() override;

  std::unique_ptr<FakePeer> NewPeer();
  // A registered agent or client (Welcome checked).
  std::unique_ptr<FakePeer> Agent(const std::string& name, int slots,
                                  const std::string& address = "");
  std::unique_ptr<FakePeer> Client(const std::string& name = "hpo");
  // Agent "a" with one slot and client "hpo", which has submitted one-rank trials 1 and 2 (run 2
  // queues behind run 1).
  struct TwoTrials {
    std::unique_ptr<FakePeer> agent;
    std::unique_ptr<FakePeer> client;
  };
  TwoTrials TwoTrialsOnOneSlot();
  // The head's Status, asked by `peer` (keeping `keep_alive` alive meanwhile).
  comm::Status GetStatus(FakePeer& peer, const std::vector<FakePeer*>& keep_alive = {});

  zmq::context_t context_{1};
  std::unique_ptr<Head> head_;
  std::string endpoint_;
  std::thread thread_;
  absl::Status result_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_LAUNCHER_HEAD_FIXTURE_H_
