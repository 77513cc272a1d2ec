// A fake agent or hpo client of the head for tests: a DEALER socket the test drives by hand.
// Receive() skips the head's heartbeats and, while it waits, sends heartbeats for itself and
// for the peers in `keep_alive` (every 10 ms), so that a test can let one peer fall silent
// while the others stay alive. Failures are gtest failures, never exceptions or exits.
// Thread-safety: not thread-safe; one test thread drives it.
#ifndef TUNEFLEET_TESTS_LAUNCHER_FAKE_PEER_H_
#define TUNEFLEET_TESTS_LAUNCHER_FAKE_PEER_H_

#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

class FakePeer {
 public:
  FakePeer(zmq::context_t& context, const std::string& endpoint);

  void Send(const comm::Envelope& envelope);
  // Bytes as they are, for frames a real peer would never send.
  void SendRaw(const std::string& bytes);
  void Heartbeat();

  // The next message that is not a heartbeat, or nullopt after `timeout`.
  std::optional<comm::Envelope> Receive(absl::Duration timeout = absl::Seconds(5),
                                        const std::vector<FakePeer*>& keep_alive = {});
  // The next message, which must have `body` (within 5 s).
  comm::Envelope Expect(comm::Envelope::BodyCase body,
                        const std::vector<FakePeer*>& keep_alive = {});
  // No message for `wait`.
  void ExpectNothing(absl::Duration wait = absl::Milliseconds(200));

 private:
  zmq::socket_t socket_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_LAUNCHER_FAKE_PEER_H_
