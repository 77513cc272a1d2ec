#include "launcher/agent/trainer_channel.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "comm/endpoint.h"
#include "common/logging.h"
#include "common/runtime_dir.h"

namespace tunefleet {
namespace launcher {

TrainerChannel::TrainerChannel(zmq::context_t& context)
    : socket_(context, zmq::socket_type::router) {}

absl::StatusOr<std::unique_ptr<TrainerChannel>> TrainerChannel::Bind(
    zmq::context_t& context, const std::string& runtime_dir) {
  const std::string ipc = runtime_dir + "/trainers.sock";
  try {
    std::unique_ptr<TrainerChannel> channel(new TrainerChannel(context));
    zmq::socket_t& socket = channel->socket_;
    comm::ConfigureSocket(socket, /*router=*/true);
    bool bound = false;
    if (ipc.size() < 100 && CheckPrivateDir(runtime_dir).ok() && comm::PrepareIpcBind(ipc).ok()) {
      try {
        comm::AcceptOnlyOwnUid(socket);
        socket.bind("ipc://" + ipc);
        bound = true;
      } catch (const zmq::error_t& e) {
        TF_LOG(WARNING) << "cannot bind ipc://" << ipc << " (" << e.what()
                        << "); trainers use TCP on loopback";
      }
    }
    if (!bound) socket.bind("tcp://127.0.0.1:*");
    channel->endpoint_ = comm::LastEndpoint(socket);
    TF_LOG(INFO) << "trainers report on " << channel->endpoint_;
    return channel;
  } catch (const zmq::error_t& e) {
    return absl::InternalError(absl::StrCat("cannot open the trainers' socket: ", e.what()));
  }
}

void TrainerChannel::Registered(LocalRun& run, int rank, const std::string& identity) {
  for (LocalRank& r : run.ranks) {
    if (r.rank == rank) r.trainer_identity = identity;
  }
  std::vector<comm::Envelope> pending;
  pending.swap(run.pending_decisions);
  for (const comm::Envelope& d : pending) Deliver(run, d);
}

void TrainerChannel::Deliver(LocalRun& run, const comm::Envelope& decision) {
  LocalRank* target = run.DecisionTarget();
  if (target == nullptr) return;
  if (target->trainer_identity.empty()) {
    run.pending_decisions.push_back(decision);
    return;
  }
  absl::Status s = comm::SendTo(socket_, target->trainer_identity, decision);
  if (!s.ok()) {
    TF_LOG(WARNING) << "cannot deliver a decision to rank " << target->rank << ": " << s.message();
  }
}

}  // namespace launcher
}  // namespace tunefleet
