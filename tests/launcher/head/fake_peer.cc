#include "tests/launcher/head/fake_peer.h"

#include <chrono>
#include <utility>

#include "absl/time/clock.h"
#include "comm/codec.h"
#include "comm/zmq_channel.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {

using comm::Envelope;

FakePeer::FakePeer(zmq::context_t& context, const std::string& endpoint)
    : socket_(context, zmq::socket_type::dealer) {
  comm::ConfigureSocket(socket_, /*router=*/false);
  socket_.connect(endpoint);
}

void FakePeer::Send(const Envelope& envelope) {
  absl::Status s = comm::Send(socket_, envelope);
  ASSERT_TRUE(s.ok()) << s;
}

void FakePeer::SendRaw(const std::string& bytes) {
  socket_.send(zmq::buffer(bytes), zmq::send_flags::none);
}

void FakePeer::Heartbeat() {
  Envelope hb;
  hb.mutable_heartbeat();
  Send(hb);
}

std::optional<Envelope> FakePeer::Receive(absl::Duration timeout,
                                          const std::vector<FakePeer*>& keep_alive) {
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

Envelope FakePeer::Expect(Envelope::BodyCase body, const std::vector<FakePeer*>& keep_alive) {
  std::optional<Envelope> envelope = Receive(absl::Seconds(5), keep_alive);
  if (!envelope.has_value()) {
    ADD_FAILURE() << "no message (wanted body " << body << ")";
    return Envelope();
  }
  EXPECT_EQ(envelope->body_case(), body) << envelope->DebugString();
  return *envelope;
}

void FakePeer::ExpectNothing(absl::Duration wait) {
  std::optional<Envelope> envelope = Receive(wait);
  EXPECT_FALSE(envelope.has_value()) << envelope->DebugString();
}

}  // namespace launcher
}  // namespace tunefleet
