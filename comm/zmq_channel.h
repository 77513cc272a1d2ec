// Envelopes over ZeroMQ sockets. The head binds a ROUTER (one socket for agents and hpo
// clients); agents bind a ROUTER for their trainers; agents, hpo and trainers connect DEALERs.
// On a ROUTER a message is [identity, frame]; on a DEALER it is [frame].
//
// Receiving never throws and never blocks: TryReceive returns nothing when no message waits,
// else the sender's identity (ROUTER) and the decode result, so a poll loop can drop and log a
// malformed or oversized frame, or answer another protocol version with Refused.
//
// Thread-safety: a ZeroMQ socket belongs to the one thread (poll loop) that uses it.
#ifndef TUNEFLEET_COMM_ZMQ_CHANNEL_H_
#define TUNEFLEET_COMM_ZMQ_CHANNEL_H_

#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace comm {

// Linger 0, a receive cap above kMaxFrameBytes (a frame far beyond the cap drops the
// connection inside ZeroMQ; one just above it is decoded and refused here), high water marks
// sized for bursts of reports, and ROUTER_MANDATORY on routers so a send to a vanished peer is
// an error instead of a silent drop.
void ConfigureSocket(zmq::socket_t& socket, bool router);

absl::Status Send(zmq::socket_t& dealer, const Envelope& envelope);
absl::Status SendTo(zmq::socket_t& router, const std::string& identity, const Envelope& envelope);

struct Received {
  std::string identity;               // ROUTER sockets: the sender
  absl::StatusOr<Envelope> envelope;  // codec.h's decode result
};
std::optional<Received> TryReceive(zmq::socket_t& socket, bool router);

// The endpoint a socket bound to (resolves "tcp://127.0.0.1:*" to the chosen port).
std::string LastEndpoint(zmq::socket_t& socket);

// Printable form of a ROUTER identity (binary) for logs.
std::string IdentityForLog(const std::string& identity);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_ZMQ_CHANNEL_H_
