// Bulk transfer of content-addressed files and folders over UCX: the fetching side. A node
// that got a server's address and a content hash over the control plane (comm/bulk_server.h)
// puts that content into its cache:
//
//   absl::StatusOr<FetchResult> r = FetchToCache(address, hash, "/var/cache/tunefleet");
//   // r->path == "/var/cache/tunefleet/<hash>"; r->reused: already there and verified.
//
// Integrity: the client hashes what it received (SHA-256, comm/content_hash.h) before the
// entry gets its final name; comm/bulk_cache.h holds the cache's crash-safety invariant. The
// transfer itself (the protocol's receiving end): comm/bulk_receiver.h.
//
// Errors are one line, e.g. "cannot reach bulk server 10.0.0.1:7000: Destination is
// unreachable", "bulk server 10.0.0.1:7000 has no content 3b1f...: unknown hash".
// Nothing is asked of the server when a verified copy is already in the cache, token or not.
// Thread-safety: FetchToCache is reentrant: each call has its own UCX worker, so threads may
// fetch concurrently.
#ifndef TUNEFLEET_COMM_BULK_FETCH_H_
#define TUNEFLEET_COMM_BULK_FETCH_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {
namespace comm {

struct FetchOptions {
  // The server's token (comm/bulk_token.h), as its owner told it over the control plane; a
  // server refuses a fetch without the right one: PermissionDenied, "bulk server ADDR refused
  // the fetch: missing or wrong token ...".
  std::string token;
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

#endif  // TUNEFLEET_COMM_BULK_FETCH_H_
