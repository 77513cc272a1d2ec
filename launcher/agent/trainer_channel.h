// The agent's channel to its trainer ranks: a ROUTER their DEALERs connect to (the endpoint is
// TUNEFLEET_AGENT_ENDPOINT in a rank's environment). A rank registers (run id and rank), then
// sends its Reports; rank 0 (or the lowest local rank) gets the head's Decisions, which wait
// here while it has not registered yet. Warm workers (launcher/agent/warm_workers.h) share the
// socket: they register with role WORKER, get RunTrial and answer TrialDone; the agent routes by
// role.
//
// The socket is a Unix socket in the agent's own folder (other users cannot connect: the socket
// file is not writable for them, and only this uid is accepted), else TCP on loopback when the
// path would be too long for a Unix socket (108 bytes) or cannot be bound.
// Thread-safety: owned by the agent's poll loop, as its socket.
#ifndef TUNEFLEET_LAUNCHER_AGENT_TRAINER_CHANNEL_H_
#define TUNEFLEET_LAUNCHER_AGENT_TRAINER_CHANNEL_H_

#include <memory>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {

class TrainerChannel {
 public:
  // Binds RUNTIME_DIR/trainers.sock (or TCP on loopback). Errors: "cannot open the trainers'
  // socket: ...".
  static absl::StatusOr<std::unique_ptr<TrainerChannel>> Bind(zmq::context_t& context,
                                                              const std::string& runtime_dir);

  zmq::socket_t& socket() { return socket_; }
  const std::string& endpoint() const { return endpoint_; }
  std::optional<comm::Received> Receive() { return comm::TryReceive(socket_, /*router=*/true); }

  // Rank `rank` of `run` registered from `identity`: the decisions kept for it go now.
  void Registered(LocalRun& run, int rank, const std::string& identity);
  // Sends the head's Decision to the run's DecisionTarget, or keeps it until that rank
  // registers; dropped when that rank is gone.
  void Deliver(LocalRun& run, const comm::Envelope& decision);

 private:
  explicit TrainerChannel(zmq::context_t& context);

  zmq::socket_t socket_;
  std::string endpoint_;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_TRAINER_CHANNEL_H_
