// A peer's session with the head, as agents and hpo clients hold it: a DEALER connected to the
// head (a CURVE client when a key folder is given), a Register, then heartbeats as in ZeroMQ's
// Majordomo pattern (comm/liveness.h), and, when the head is lost, registering again on a fresh
// socket every few seconds as in zguide's Lazy Pirate (queued messages to a dead head are
// dropped with the old socket).
//
// States:
//   kRegistering  a Register is on its way and no Welcome answered it yet: the first one (given
//                 up after register_timeout), or one after the head forgot this peer (it waits)
//   kWelcomed     the head answered: a Heartbeat goes whenever nothing else was sent for an
//                 interval (the Welcome's heartbeat_interval_ms); silent for kDefaultLiveness
//                 intervals, the head is lost
//   kLost         lost after a Welcome (silent, or another head instance refused this peer):
//                 a fresh socket and a Register every reregister_every; no Welcome within
//                 head_grace after the loss, the owner gives up
// Every Register carries the session of the last Welcome (previous_session), so that a head
// knows a peer coming back; the owner builds the rest of it (role, name, the runs it holds).
//
// What the owner does with the head's messages (which runs go on, what it sends again after a
// Welcome) is its own business: the session only says which state it is in. Time is an argument
// everywhere, as in comm/liveness.h, so the state machine is testable without waiting.
// Thread-safety: not thread-safe; owned by one poll loop, as its socket.
#ifndef TUNEFLEET_COMM_HEAD_SESSION_H_
#define TUNEFLEET_COMM_HEAD_SESSION_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/liveness.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"

namespace tunefleet {
namespace comm {

// The heartbeat interval before the head's Welcome says another (and when it says none).
inline constexpr absl::Duration kDefaultHeartbeatInterval = absl::Seconds(1);

class HeadSession {
 public:
  struct Options {
    std::string head;      // the head's endpoint
    std::string keys_dir;  // CURVE: server.pub and client.key (comm/curve_auth.h); empty: none
    // Who the hints of a first Register that nobody answers name: "this agent".
    std::string who = "this peer";
    // The first Register unanswered this long: Poll gives up (InfiniteDuration: never).
    absl::Duration register_timeout = absl::InfiniteDuration();
    // After losing the head, how long to wait for it to come back.
    absl::Duration head_grace = absl::Minutes(5);
    // While the head is lost: a fresh socket and a Register this often.
    absl::Duration reregister_every = absl::Seconds(3);
  };
  enum class State { kRegistering, kWelcomed, kLost };

  // `make_register` builds each Register this session sends (an Envelope holding a Register);
  // the session sets its previous_session.
  HeadSession(zmq::context_t& context, Options options, std::function<Envelope()> make_register);
  ~HeadSession();

  // A fresh socket to the head and a Register on it. Errors: a key folder that does not load
  // (as comm::LoadClientKeys says), an endpoint ZeroMQ refuses (InvalidArgument, "cannot
  // connect to head ENDPOINT: ..."). Sets the state to kRegistering unless the head is lost.
  absl::Status Connect(absl::Time now);
  // A Register on the current socket (same state rule as Connect).
  void Register(absl::Time now);
  // Sends `envelope` to the head; a failure is logged ("cannot send X to the head: ...") and
  // the message dropped. Counts as sent for the heartbeat.
  void Send(const Envelope& envelope, absl::Time now);
  // The next frame from the head, if one waits (comm::TryReceive). Any frame, even one that
  // does not decode, counts as heard.
  std::optional<Received> Receive(absl::Time now);

  // A Welcome: the session is kWelcomed, heartbeating at its interval.
  struct Welcomed {
    bool first = false;      // no Welcome came before
    bool was_lost = false;   // the head came back after a loss
    bool restarted = false;  // another head instance than the last Welcome's
    absl::Time lost_at;      // when it was lost (was_lost)
  };
  Welcomed OnWelcome(const Welcome& welcome, absl::Time now);

  // What a Refused means for this session.
  enum class Refusal {
    // kRefusedRegisterFirst from another head instance than the last Welcome's: the head
    // restarted (the owner usually calls Lose and Register).
    kHeadRestarted,
    // kRefusedRegisterFirst otherwise: the head does not know this peer (never registered, or
    // declared lost).
    kUnknownToHead,
    // Any other reason (another protocol version, a name taken, ...).
    kOther,
  };
  Refusal Classify(const Refused& refused) const;

  // The head is gone or another instance answers: kLost, registering again (Poll). True the
  // first time (the owner logs it then), false when it was lost already.
  bool Lose(absl::Time now);

  // How Poll treats a head that goes silent or stays away.
  enum class Mode {
    kWait,      // lose a silent head and wait for it (registering again) up to head_grace
    kFailFast,  // a silent head is given up on at once; a head lost before is still waited for
    kIdle,      // the owner winds down: heartbeat and notice a silent head, nothing more
  };
  struct Tick {
    std::string lost;     // set when the head went silent in this call: the line saying so
    absl::Status status;  // not OK: give up (why, in one line)
  };
  // Once per loop iteration: a Heartbeat when due; a silent head is lost (kWait, kIdle; the
  // loss is "lost the head at ENDPOINT (no heartbeat for 3s)") or given up on (kFailFast);
  // while lost (kWait, kFailFast), a fresh socket and a Register every reregister_every, and
  // "the head at ENDPOINT did not come back within 5m" after head_grace; a first Register
  // unanswered for register_timeout is given up on (not in kIdle).
  Tick Poll(absl::Time now, Mode mode);

  zmq::socket_t& socket() { return *socket_; }
  State state() const { return state_; }
  bool welcomed() const { return state_ == State::kWelcomed; }
  bool lost() const { return state_ == State::kLost; }
  // The head's session id from its last Welcome; empty before the first.
  const std::string& session() const { return session_; }
  absl::Time lost_at() const { return lost_at_; }
  const Liveness& liveness() const { return liveness_; }
  const Options& options() const { return options_; }

 private:
  zmq::context_t& context_;
  Options options_;
  std::function<Envelope()> make_register_;
  std::unique_ptr<zmq::socket_t> socket_;
  State state_ = State::kRegistering;
  Liveness liveness_;
  std::string session_;
  absl::Time registered_at_ = absl::InfinitePast();
  absl::Time lost_at_ = absl::InfinitePast();
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_HEAD_SESSION_H_
