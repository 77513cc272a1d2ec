#include "launcher/head/head_socket.h"

#include <cerrno>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "comm/endpoint.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr char kControlEndpoint[] = "inproc://tunefleet-head-control";

}  // namespace

HeadSocket::HeadSocket(std::string bind, std::string keys_dir)
    : bind_(std::move(bind)), keys_dir_(std::move(keys_dir)), context_(1) {
  control_rx_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
  control_rx_->set(zmq::sockopt::linger, 0);
  control_rx_->bind(kControlEndpoint);
  absl::MutexLock lock(&control_mu_);
  control_tx_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
  control_tx_->set(zmq::sockopt::linger, 0);
  control_tx_->connect(kControlEndpoint);
}

HeadSocket::~HeadSocket() {
  router_.reset();
  zap_.reset();
  control_rx_.reset();
  absl::MutexLock lock(&control_mu_);
  control_tx_.reset();
}

absl::Status HeadSocket::Bind() {
  if (router_ != nullptr) return absl::OkStatus();
  auto router = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
  comm::ConfigureSocket(*router, /*router=*/true);
  if (!keys_dir_.empty()) {
    absl::StatusOr<comm::ServerKeys> keys = comm::LoadServerKeys(keys_dir_);
    if (!keys.ok()) return absl::InvalidArgumentError(keys.status().message());
    zap_ = std::make_unique<comm::ZapHandler>(context_, keys->authorized);
    comm::MakeCurveServer(*router, *keys);
    TF_LOG(INFO) << "CURVE on: " << keys->authorized.size() << " authorized client key(s) from "
                 << keys_dir_;
  }
  absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(bind_, /*for_bind=*/true);
  if (!parsed.ok()) return parsed.status();
  if (parsed->ipc) {
    // A socket file left by a killed head is removed; a live head's is not taken over.
    if (absl::Status s = comm::PrepareIpcBind(parsed->path); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("cannot bind ", bind_, ": ", s.message()));
    }
    comm::AcceptOnlyOwnUid(*router);  // the control plane is this user's alone
  }
  try {
    router->bind(parsed->text);
  } catch (const zmq::error_t& e) {
    const std::string message = absl::StrCat("cannot bind ", bind_, ": ", e.what());
    if (e.num() == EINVAL || e.num() == EPROTONOSUPPORT || e.num() == ENOENT) {
      return absl::InvalidArgumentError(message);
    }
    return absl::UnavailableError(message);
  }
  router_ = std::move(router);
  endpoint_ = comm::LastEndpoint(*router_);
  return absl::OkStatus();
}

absl::StatusOr<HeadSocket::Wakeup> HeadSocket::Wait(absl::Duration timeout, int signal_fd) {
  zmq::pollitem_t items[] = {
      {static_cast<void*>(*router_), 0, ZMQ_POLLIN, 0},
      {static_cast<void*>(*control_rx_), 0, ZMQ_POLLIN, 0},
      {zap_ != nullptr ? static_cast<void*>(zap_->socket()) : nullptr, -1, ZMQ_POLLIN, 0},
      {nullptr, signal_fd, ZMQ_POLLIN, 0},
  };
  const size_t n_items = signal_fd >= 0 ? 4 : 3;
  Wakeup wakeup;
  try {
    zmq::poll(items, n_items, std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout) + 1));
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) {
      wakeup.interrupted = true;
      return wakeup;
    }
    return absl::InternalError(absl::StrCat("head poll: ", e.what()));
  }
  if (zap_ != nullptr && (items[2].revents & ZMQ_POLLIN)) zap_->HandleRequest();
  wakeup.signalled = signal_fd >= 0 && (items[3].revents & ZMQ_POLLIN);
  wakeup.stopped = items[1].revents & ZMQ_POLLIN;
  return wakeup;
}

void HeadSocket::LingerOnClose() {
  if (router_ != nullptr) router_->set(zmq::sockopt::linger, 1000);
}

void HeadSocket::Stop() {
  absl::MutexLock lock(&control_mu_);
  if (control_tx_ == nullptr) return;
  try {
    control_tx_->send(zmq::str_buffer("stop"), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
    // The loop has gone already.
  }
}

}  // namespace launcher
}  // namespace tunefleet
