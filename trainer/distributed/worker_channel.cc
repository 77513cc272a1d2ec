#include "trainer/distributed/worker_channel.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <zmq.hpp>

#include "absl/strings/str_cat.h"
#include "comm/codec.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"
#include "common/logging.h"

namespace tunefleet {
namespace trainer {

struct WorkerChannel::Impl {
  Impl() : context(1) {}
  zmq::context_t context;  // declared first: destroyed after the socket
  std::unique_ptr<zmq::socket_t> socket;
};

WorkerChannel::WorkerChannel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

WorkerChannel::~WorkerChannel() {
  if (impl_ == nullptr || impl_->socket == nullptr) return;
  try {
    impl_->socket->set(zmq::sockopt::linger, 2000);
  } catch (const zmq::error_t&) {
  }
}

absl::StatusOr<std::unique_ptr<WorkerChannel>> WorkerChannel::Connect(const std::string& endpoint,
                                                                      int slot) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->socket = std::make_unique<zmq::socket_t>(impl->context, zmq::socket_type::dealer);
    comm::ConfigureSocket(*impl->socket, /*router=*/false);
    impl->socket->connect(endpoint);
  } catch (const zmq::error_t& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach the agent at ", endpoint, ": ", e.what()));
  }
  comm::Envelope hello;
  comm::Register* r = hello.mutable_register_();
  r->set_role(comm::WORKER);
  r->set_pid(::getpid());
  r->set_slot(slot);
  if (absl::Status s = comm::Send(*impl->socket, hello); !s.ok()) return s;
  return std::unique_ptr<WorkerChannel>(new WorkerChannel(std::move(impl)));
}

WorkerChannel::Event WorkerChannel::Next(absl::Duration timeout, TrialOrder* order) {
  zmq::pollitem_t item{static_cast<void*>(*impl_->socket), 0, ZMQ_POLLIN, 0};
  // zmq_poll itself, not cppzmq's wrapper: a signal (SIGTERM between trials) ends the wait with
  // EINTR, which the wrapper would throw.
  if (zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) <= 0) return Event::kNone;
  while (auto received = comm::TryReceive(*impl_->socket, /*router=*/false)) {
    if (!received->envelope.ok()) {
      TF_LOG(WARNING) << "dropped a message from the agent: " << received->envelope.status();
      continue;
    }
    const comm::Envelope& e = *received->envelope;
    switch (e.body_case()) {
      case comm::Envelope::kRunTrial: {
        const comm::RunTrial& t = e.run_trial();
        order->run_id = t.run_id();
        order->trial = t.trial();
        order->argv.assign(t.argv().begin(), t.argv().end());
        order->env = std::map<std::string, std::string>(t.env().begin(), t.env().end());
        order->log_path = t.log_path();
        return Event::kRunTrial;
      }
      case comm::Envelope::kShutdown:
        TF_LOG(INFO) << "the agent asked this worker to leave: " << e.shutdown().reason();
        return Event::kShutdown;
      default:
        TF_LOG(WARNING) << "ignored a " << comm::BodyName(e) << " from the agent";
    }
  }
  return Event::kNone;
}

absl::Status WorkerChannel::SendDone(const TrialResult& result) {
  comm::Envelope envelope;
  comm::TrialDone* done = envelope.mutable_trial_done();
  done->set_run_id(result.run_id);
  done->set_exit_code(result.exit_code);
  done->set_retiring(result.retiring);
  done->set_stderr_tail(result.stderr_tail);
  return comm::Send(*impl_->socket, envelope);
}

}  // namespace trainer
}  // namespace tunefleet
