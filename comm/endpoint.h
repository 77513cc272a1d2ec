// ZeroMQ endpoints as the control plane uses them, checked before ZeroMQ sees them:
//   tcp://HOST:PORT   HOST an IP address, "localhost" (taken as 127.0.0.1, which ZeroMQ's bind
//                     needs), "*" or a host name (connect only); PORT 1-65535, or 0 / "*" for
//                     any (bind only)
//   ipc://PATH        a Unix socket
// and the ipc:// rules that keep the control plane private: a head or agent binds its socket
// in a 0700 folder of its own (common/runtime_dir.h) and accepts only peers of its own uid
// (ZMQ_IPC_FILTER_UID, SO_PEERCRED); a client finds out at once, by the file's permissions,
// that an ipc:// socket belongs to another user, instead of waiting for a silent head.
// Also this host's network identity as peers see it: its name, the local address on the route
// to a peer (what a rank announces as MASTER_ADDR, an agent as its address), a free TCP port.
// Thread-safety: stateless.
#ifndef TUNEFLEET_COMM_ENDPOINT_H_
#define TUNEFLEET_COMM_ENDPOINT_H_

#include <string>

#include <zmq.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace comm {

struct Endpoint {
  bool ipc = false;
  std::string host;  // tcp
  std::string port;  // tcp: digits, or "*"
  std::string path;  // ipc
  std::string text;  // normalised: tcp://127.0.0.1:5555 for tcp://localhost:5555
};

// `for_bind`: a port of 0 or "*" is allowed. Errors are one line naming the flag's value
// (clipped) and what is wrong: "port 99999 is out of range (1-65535)".
absl::StatusOr<Endpoint> ParseEndpoint(const std::string& text, bool for_bind);
// tcp on a loopback address, or ipc.
bool IsLocalEndpoint(const std::string& text);

// Before binding ipc://PATH: an existing socket file nobody listens on (left by a killed
// process) is removed; one somebody listens on is AlreadyExists ("another process listens
// on PATH").
absl::Status PrepareIpcBind(const std::string& path);
// After binding an ipc:// socket: accept only peers running as this process's effective uid.
void AcceptOnlyOwnUid(zmq::socket_t& socket);
// Before connecting to ipc://PATH: PermissionDenied, naming the owner, when this user cannot
// reach the socket (another user's private folder or socket); NotFound when nothing is there.
absl::Status CheckIpcReachable(const std::string& path);

// The host of a tcp://HOST:PORT endpoint (as written; "*" stays "*"); "127.0.0.1" for ipc://
// and anything else, whose peer is on this host.
std::string EndpointHost(const std::string& endpoint);

// This host's name (gethostname(2)).
absl::StatusOr<std::string> HostName();

// The local IPv4 address this host sends from toward `host` (a name or an address) and `port`
// (a number or a service name): the one a peer there reaches it at. No packet is sent (a UDP
// connect). Errors name the host as `name_in_errors` (default: `host`): InvalidArgument "NAME
// does not resolve: ...", Unavailable "no route to NAME: ...".
absl::StatusOr<std::string> LocalAddressToward(const std::string& host, const std::string& port,
                                               const std::string& name_in_errors = "");
// LocalAddressToward the host of a tcp:// endpoint (port 5555 when it names none); "127.0.0.1"
// for ipc:// endpoints and when that fails.
std::string LocalAddressForEndpoint(const std::string& endpoint);

// A TCP port free right now on `ip` (every interface when `ip` is no IPv4 address): bound with
// port 0, read back and closed, so another process may take it before the caller binds it.
absl::StatusOr<int> FreeTcpPort(const std::string& ip);

// Waits until something listens on `host`:`port` (a TCP connect succeeds; the connection is
// closed at once), trying every 10 ms: a client that connects only then is not put off by its
// library's retry back-off (c10d's TCPStore waits a second after a refused connect).
// DeadlineExceeded after `timeout`; InvalidArgument when `host` does not resolve.
absl::Status WaitForTcpListener(const std::string& host, int port, absl::Duration timeout);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_ENDPOINT_H_
