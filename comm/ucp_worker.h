// UCX plumbing shared by the bulk server and client (comm/bulk_server.h, comm/bulk_receiver.h):
// one UCP context and worker with active messages and wake-up events, a progress-or-sleep step
// for event loops, and socket addresses written as "IP:PORT".
//
// Configuration comes from the UCX_* environment (UCX_TLS, UCX_NET_DEVICES, ...), as for any
// UCX program; nothing is forced here, except that UCX's log lines go to stderr (UCX writes
// them to stdout, into a program's output) unless UCX_LOG_FILE is set, and that a server's
// worker may be given its network devices (NetDevicesFor): UCX's TCP transport opens a
// listening socket on every network device it uses, whatever address the listener binds. Without
// RDMA devices UCX connects through its TCP connection manager and moves data over tcp (or shared
// memory within one host); with RDMA devices it prefers them. UCX_TLS=tcp pins TCP.
//
// Thread-safety: a UcpWorker belongs to the one thread that progresses it, except Signal(),
// which any thread may call to wake that thread.
#ifndef TUNEFLEET_COMM_UCP_WORKER_H_
#define TUNEFLEET_COMM_UCP_WORKER_H_

#include <sys/socket.h>

#include <memory>
#include <string>

#include <ucp/api/ucp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace comm {

// Lowers UCX's own logging to errors (it warns about every transport or device it cannot use)
// unless the user set UCX_LOG_LEVEL. For tools; call before the first UCX use.
void QuietUcxWarnings();

// "what: <UCX's text for status>" with a matching absl code.
absl::Status UcsError(ucs_status_t status, const std::string& what);

class UcpWorker {
 public:
  // A context (active messages + wake-up) and a single-threaded worker on it. `net_devices`
  // non-empty: UCX's NET_DEVICES for this context (as UCX_NET_DEVICES would set it).
  static absl::StatusOr<std::unique_ptr<UcpWorker>> Create(const std::string& net_devices = "");
  ~UcpWorker();
  UcpWorker(const UcpWorker&) = delete;
  UcpWorker& operator=(const UcpWorker&) = delete;

  ucp_worker_h worker() const { return worker_; }

  // Progresses the worker until it has nothing more to do; true when anything happened.
  bool Progress();
  // Sleeps until the worker has events, Signal() is called or `timeout_ms` passes (returns at
  // once when events are already pending). Call after Progress() returned false.
  void Wait(int timeout_ms);
  // Wakes a Wait() on another thread.
  void Signal();

 private:
  UcpWorker() = default;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
};

struct SockAddr {
  sockaddr_storage storage;
  socklen_t length = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// "10.0.0.1:7000", "[fe80::1]:7000" or "host:7000" (resolved) -> an address. Errors name `text`.
absl::StatusOr<SockAddr> ParseHostPort(const std::string& text);
// An address and port; `host` may be a name or numeric (IPv4 or IPv6).
absl::StatusOr<SockAddr> ResolveAddress(const std::string& host, int port);
// Connects a plain TCP socket to `addr` and closes it: OK, or the system's reason
// ("Connection refused", "No route to host", "Connection timed out" after `timeout_ms`). Used
// to explain a failed UCX connection in the words a user knows.
absl::Status ProbeTcp(const SockAddr& addr, int timeout_ms);

// Binds (and closes) a TCP socket on `addr`, as a listener would: OK, or why not ("Address
// already in use", "Cannot assign requested address").
absl::Status TryBind(const SockAddr& addr);

// The NET_DEVICES a server listening on `addr` gives its worker, so that UCX's own TCP
// listeners open only on the interface that holds `addr`: "" (UCX's own choice, every device)
// for a wildcard address (0.0.0.0, ::) or when the user set UCX_NET_DEVICES; else that
// interface ("lo" for a loopback address), followed by the RDMA ports present
// (/sys/class/infiniband/DEV/ports/N as "DEV:N", which UCX counts as network devices too: RDMA
// stays available). FailedPrecondition when no interface holds `addr`.
absl::StatusOr<std::string> NetDevicesFor(const SockAddr& addr);

// "10.0.0.1:7000" / "[::1]:7000".
std::string FormatSockAddr(const sockaddr* addr);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_UCP_WORKER_H_
