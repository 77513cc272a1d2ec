// ZeroMQ CURVE for the control plane: key folders, socket setup, and the head's ZAP handler.
//
// `head --gen_keys DIR` writes (secret files 0600, the folder 0700):
//   DIR/server.key       "public <z85>" and "secret <z85>" lines: the head's key pair
//   DIR/server.pub       "public <z85>": what agents and hpo need of the head
//   DIR/client.key       a client key pair, for agents and hpo
//   DIR/authorized_keys  the client public keys the head accepts, one a line ('#' comments),
//                        like ssh's authorized_keys; add a line per further client key
// The head (`--keys DIR`) makes its ROUTER a CURVE server and answers ZeroMQ's authentication
// (ZAP) requests itself: a client whose public key is not listed is refused during the handshake
// and never reaches the protocol. Agents and hpo (`--keys DIR`) load server.pub and client.key.
// Errors name the file and line.
//
// Permissions, as OpenSSH's StrictModes: loading refuses a key folder writable by group or
// others, a secret key file (server.key, client.key) with any group or other permission, and a
// file that decides whom to trust (authorized_keys, server.pub) writable by group or others;
// also any of them owned by another user than this one or root. The error is one line naming
// the file, its mode and the command that fixes it ("run chmod 600 DIR/client.key"), code
// PermissionDenied.
// Thread-safety: ZapHandler belongs to the head's poll loop; the rest is stateless.
#ifndef TUNEFLEET_COMM_CURVE_AUTH_H_
#define TUNEFLEET_COMM_CURVE_AUTH_H_

#include <string>

#include <zmq.hpp>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace comm {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;
};

struct ServerKeys {
  CurveKeyPair server;
  absl::flat_hash_set<std::string> authorized;  // client public keys (Z85)
};

struct ClientKeys {
  CurveKeyPair client;
  std::string server_public_key;
};

// Writes a new key folder: DIR (created 0700, or an existing folder made 0700), secret files
// 0600. AlreadyExists if DIR already holds keys (never overwrites); InvalidArgument if DIR
// exists and is not a folder.
absl::Status GenerateKeyFolder(const std::string& dir);
// Both check the permissions first (above), then parse; parse errors are InvalidArgument.
absl::StatusOr<ServerKeys> LoadServerKeys(const std::string& dir);
absl::StatusOr<ClientKeys> LoadClientKeys(const std::string& dir);

// Before bind / connect.
void MakeCurveServer(zmq::socket_t& socket, const ServerKeys& keys);
void MakeCurveClient(zmq::socket_t& socket, const ClientKeys& keys);

// ZeroMQ's authentication requests (RFC 27, ZAP) for CURVE servers of `context`: bound at
// inproc://zeromq.zap.01, which must happen before the CURVE server socket binds. The owner
// polls socket() and calls HandleRequest() when it is readable.
class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, absl::flat_hash_set<std::string> authorized);
  zmq::socket_t& socket() { return socket_; }
  // Answers one request: 200 for a listed key, 400 otherwise (logged, at most once a key).
  void HandleRequest();
  int64_t refused() const { return refused_; }

 private:
  zmq::socket_t socket_;
  absl::flat_hash_set<std::string> authorized_;
  absl::flat_hash_set<std::string> logged_;
  int64_t refused_ = 0;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_CURVE_AUTH_H_
