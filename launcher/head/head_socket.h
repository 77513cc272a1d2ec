// The head's sockets (head.h): one ROUTER that serves both node agents and hpo clients, with
// CURVE authentication when a key folder is set (comm/curve_auth.h; its ZAP requests are
// answered from Wait()) and, on ipc://, only this user's peers; and an inproc PAIR through
// which Stop() wakes the poll loop from another thread.
// Thread-safety: Stop() is safe from any thread; everything else belongs to the poll loop.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_SOCKET_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_SOCKET_H_

#include <memory>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "comm/curve_auth.h"
#include "comm/proto/messages.pb.h"
#include "comm/zmq_channel.h"

namespace tunefleet {
namespace launcher {

class HeadSocket {
 public:
  // `bind`: tcp://IP:PORT (PORT may be *), or ipc://PATH. `keys_dir`: the key folder of
  // `head --gen_keys`; empty: no encryption. Creates the Stop() channel; binds nothing yet.
  HeadSocket(std::string bind, std::string keys_dir);
  ~HeadSocket();
  HeadSocket(const HeadSocket&) = delete;
  HeadSocket& operator=(const HeadSocket&) = delete;

  // Binds the ROUTER. InvalidArgument for a malformed endpoint or unusable keys, Unavailable
  // when it cannot bind (a live head's ipc socket is never taken over; a killed one's is
  // removed).
  absl::Status Bind();
  bool bound() const { return router_ != nullptr; }
  // The bound endpoint with wildcards resolved ("tcp://127.0.0.1:41234"); empty before Bind().
  const std::string& endpoint() const { return endpoint_; }

  struct Wakeup {
    bool interrupted = false;  // EINTR: nothing was looked at
    bool signalled = false;    // `signal_fd` is readable
    bool stopped = false;      // Stop() was called
  };
  // Waits up to `timeout` for a message, a Stop(), or `signal_fd` (-1: none) to be readable,
  // answering CURVE handshakes. Internal for a fatal poll error.
  absl::StatusOr<Wakeup> Wait(absl::Duration timeout, int signal_fd);
  // The next frame waiting on the ROUTER, never blocking (comm/zmq_channel.h).
  std::optional<comm::Received> TryReceive() { return comm::TryReceive(*router_, /*router=*/true); }
  absl::Status Send(const std::string& identity, const comm::Envelope& envelope) {
    return comm::SendTo(*router_, identity, envelope);
  }
  // Lets what was sent leave before the socket closes (ConfigureSocket sets linger 0).
  void LingerOnClose();

  // Wakes Wait() with `stopped`. Thread-safe; callable before Bind().
  void Stop();

 private:
  std::string bind_;
  std::string keys_dir_;
  std::string endpoint_;
  zmq::context_t context_;
  std::unique_ptr<zmq::socket_t> router_;
  std::unique_ptr<comm::ZapHandler> zap_;      // CURVE authentication, when keys are set
  std::unique_ptr<zmq::socket_t> control_rx_;  // poll loop side
  absl::Mutex control_mu_;
  std::unique_ptr<zmq::socket_t> control_tx_ ABSL_GUARDED_BY(control_mu_);  // Stop() side
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_SOCKET_H_
