#include "comm/zmq_channel.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "comm/codec.h"

namespace tunefleet {
namespace comm {
namespace {

absl::Status SendFrames(zmq::socket_t& socket, const std::string* identity,
                        const Envelope& envelope) {
  absl::StatusOr<std::string> frame = EncodeEnvelope(envelope);
  if (!frame.ok()) return frame.status();
  try {
    if (identity != nullptr) {
      if (!socket.send(zmq::buffer(*identity),
                       zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return absl::UnavailableError("send would block (peer's queue is full)");
      }
    }
    if (!socket.send(zmq::buffer(*frame), zmq::send_flags::dontwait)) {
      return absl::UnavailableError("send would block (peer's queue is full)");
    }
  } catch (const zmq::error_t& e) {
    if (e.num() == EHOSTUNREACH) return absl::NotFoundError("peer is no longer connected");
    return absl::UnavailableError(absl::StrCat("zmq send: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

void ConfigureSocket(zmq::socket_t& socket, bool router) {
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(4 * kMaxFrameBytes));
  socket.set(zmq::sockopt::sndhwm, 100000);
  socket.set(zmq::sockopt::rcvhwm, 100000);
  if (router) socket.set(zmq::sockopt::router_mandatory, 1);
}

absl::Status Send(zmq::socket_t& dealer, const Envelope& envelope) {
  return SendFrames(dealer, nullptr, envelope);
}

absl::Status SendTo(zmq::socket_t& router, const std::string& identity, const Envelope& envelope) {
  return SendFrames(router, &identity, envelope);
}

std::optional<Received> TryReceive(zmq::socket_t& socket, bool router) {
  Received received{"", absl::DataLossError("empty message")};
  try {
    zmq::message_t part;
    if (!socket.recv(part, zmq::recv_flags::dontwait)) return std::nullopt;
    if (router) {
      received.identity = part.to_string();
      if (!part.more()) {
        received.envelope = absl::DataLossError("message without a payload frame");
        return received;
      }
      if (!socket.recv(part, zmq::recv_flags::dontwait)) {
        received.envelope = absl::DataLossError("truncated message");
        return received;
      }
    }
    if (part.more()) {
      // Our peers send exactly one payload frame; drain and drop anything else.
      zmq::message_t extra;
      while (part.more() && socket.recv(extra, zmq::recv_flags::dontwait)) part.swap(extra);
      received.envelope = absl::DataLossError("message with more than one payload frame");
      return received;
    }
    received.envelope =
        DecodeEnvelope(absl::string_view(static_cast<const char*>(part.data()), part.size()));
  } catch (const zmq::error_t& e) {
    if (e.num() == EAGAIN) return std::nullopt;
    received.envelope = absl::UnavailableError(absl::StrCat("zmq recv: ", e.what()));
  }
  return received;
}

std::string LastEndpoint(zmq::socket_t& socket) { return socket.get(zmq::sockopt::last_endpoint); }

std::string IdentityForLog(const std::string& identity) { return absl::BytesToHexString(identity); }

}  // namespace comm
}  // namespace tunefleet
