// Bulk transfer of content-addressed files and folders (datasets, checkpoints) over UCX, for
// nodes that share no file system. Control messages stay on ZeroMQ; a head or agent that has
// bytes to offer runs a BulkServer, publishes paths and sends their hashes in its control
// messages; the receiving side calls FetchToCache with the server's address and the hash.
//
//   auto server = BulkServer::Start("10.0.0.1", 0);          // its own progress thread
//   absl::StatusOr<std::string> hash = (*server)->Publish("/data/sts");  // file or folder
//   ... send (*server)->address() and *hash to the node over the control plane ...
//   absl::StatusOr<FetchResult> r = FetchToCache(address, hash, "/var/cache/tunefleet");
//   // r->path == "/var/cache/tunefleet/<hash>"; r->reused: already there and verified.
//
// Wire: UCP client-server connection (listener + endpoint by socket address) and UCP active
// messages with small protobuf headers (comm/proto/bulk.proto); content moves in chunks of up
// to 4 MiB, at most 4 chunks in flight per transfer (comm/bulk_wire.h; UCX picks eager or
// rendezvous, zero-copy where the transport can). UCX picks the transport from UCX_TLS and
// the devices present: RDMA where there is some, else TCP (UCX_TLS=tcp pins it).
// Integrity: the client hashes what it received (SHA-256, comm/content_hash.h) before the
// entry gets its final name; comm/bulk_cache.h holds the cache's crash-safety invariant.
//
// Errors are one line, e.g. "cannot reach bulk server 10.0.0.1:7000: Destination is
// unreachable", "bulk server 10.0.0.1:7000 has no content 3b1f...: unknown hash".
// Thread-safety: BulkServer's methods may be called from any thread. FetchToCache is
// reentrant: each call has its own UCX worker, so threads may fetch concurrently.
#ifndef TUNEFLEET_COMM_UCX_TRANSFER_H_
#define TUNEFLEET_COMM_UCX_TRANSFER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace comm {

// Serves published files and folders by content hash to any number of clients, concurrently,
// from one progress thread. Published content must not change while served; a client that
// receives changed bytes rejects them (hash mismatch).
class BulkServer {
 public:
  // Listens on bind_ip:port (port 0: a free port; bind_ip "0.0.0.0": every interface).
  static absl::StatusOr<std::unique_ptr<BulkServer>> Start(const std::string& bind_ip, int port);
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
    uint64_t transfers_failed = 0;  // client gone, read error, unknown hash
    uint64_t bytes_sent = 0;
  };
  Stats stats() const;

 private:
  class Impl;
  explicit BulkServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct FetchOptions {
  // Fail when the server sends nothing for this long (also bounds connecting).
  absl::Duration idle_timeout = absl::Seconds(30);
  // Called on the fetching thread as bytes arrive (done, total), at most a few times a second.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct FetchResult {
  std::string path;               // cache_dir/<hash>
  bool reused = false;            // was already in the cache and verified: nothing transferred
  bool directory = false;         // a folder (else a file)
  bool replaced_corrupt = false;  // an entry under that name failed verification; fetched anew
  uint64_t bytes = 0;             // content bytes transferred
  double transfer_seconds = 0;    // connect + transfer
  double verify_seconds = 0;      // hashing (the cache check when reused)
};

// Puts the content `hash` into cache_dir/<hash>: reuses a present entry that verifies (no
// connection at all), else fetches it from the BulkServer at `server_address` ("IP:PORT")
// into a temporary name, verifies its SHA-256 and renames it into place. Creates cache_dir.
absl::StatusOr<FetchResult> FetchToCache(const std::string& server_address, const std::string& hash,
                                         const std::string& cache_dir,
                                         const FetchOptions& options = {});

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_UCX_TRANSFER_H_
