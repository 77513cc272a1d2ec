// Bulk transfer of content-addressed files and folders (datasets, checkpoints) over UCX, for
// nodes that share no file system: the serving side. Control messages stay on ZeroMQ; a head or
// agent that has bytes to offer runs a BulkServer, publishes paths and sends their hashes in
// its control messages; the receiving side calls FetchToCache (comm/bulk_fetch.h) with the
// server's address and the hash.
//
//   auto server = BulkServer::Start("10.0.0.1", 0, token);   // its own progress thread
//   absl::StatusOr<std::string> hash = (*server)->Publish("/data/sts");  // file or folder
//   ... send (*server)->address(), *hash and the token to the node over the control plane ...
//
// Authentication: UCX has none of its own, so the server serves only requests that carry its
// token (comm/bulk_token.h; compared in constant time): any other request is answered
// BULK_UNAUTHORIZED before the hash is looked up, and logged once per client IP. Where it
// listens: on bind_ip only, UCX's own per-device TCP listeners included (comm/ucp_worker.h
// NetDevicesFor), unless bind_ip is a wildcard or UCX_NET_DEVICES says otherwise.
//
// Wire: UCP client-server connection (listener + endpoint by socket address) and UCP active
// messages with small protobuf headers (comm/proto/bulk.proto); content moves in chunks of up
// to 4 MiB, at most 4 chunks in flight per transfer (comm/bulk_wire.h; UCX picks eager or
// rendezvous, zero-copy where the transport can). UCX picks the transport from UCX_TLS and
// the devices present: RDMA where there is some, else TCP (UCX_TLS=tcp pins it).
// What is served and how it is read in chunks: comm/bulk_source.h.
//
// Thread-safety: BulkServer's methods may be called from any thread.
#ifndef TUNEFLEET_COMM_BULK_SERVER_H_
#define TUNEFLEET_COMM_BULK_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace comm {

// Serves published files and folders by content hash to any number of clients, concurrently,
// from one progress thread. Published content must not change while served; a client that
// receives changed bytes rejects them (hash mismatch).
class BulkServer {
 public:
  // Listens on bind_ip:port (port 0: a free port; bind_ip "0.0.0.0": every interface) and
  // serves requests that present `token` (at least 16 bytes; InvalidArgument otherwise).
  static absl::StatusOr<std::unique_ptr<BulkServer>> Start(const std::string& bind_ip, int port,
                                                           const std::string& token);
  // Stops serving; transfers in progress end and their clients get an error.
  ~BulkServer();
  BulkServer(const BulkServer&) = delete;
  BulkServer& operator=(const BulkServer&) = delete;

  // "IP:PORT" the listener is bound to (the chosen port when Start got 0).
  std::string address() const;

  // Hashes `path` (a file or a folder) and serves it under that hash from now on; returns the
  // hash. Publishing the same content again is harmless.
  absl::StatusOr<std::string> Publish(const std::string& path);

  struct Stats {
    uint64_t transfers_completed = 0;
    uint64_t transfers_failed = 0;  // client gone, read error, unknown hash, refused token
    uint64_t requests_refused = 0;  // of those: no or a wrong token
    uint64_t bytes_sent = 0;
  };
  Stats stats() const;

 private:
  class Impl;
  explicit BulkServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_SERVER_H_
