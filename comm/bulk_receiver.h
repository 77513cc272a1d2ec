// The receiving end of the bulk protocol (comm/proto/bulk.proto): one transfer from a bulk
// server (comm/bulk_server.h) into a temporary path, written through comm/bulk_sink.h.
// FetchToCache (comm/bulk_fetch.h) wraps it with the cache: the reuse check before, the hash
// verification and the rename after (comm/bulk_cache.h).
// Thread-safety: each call has its own UCX worker and endpoint; calls may run concurrently.
#ifndef TUNEFLEET_COMM_BULK_RECEIVER_H_
#define TUNEFLEET_COMM_BULK_RECEIVER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "comm/ucp_worker.h"

namespace tunefleet {
namespace comm {

struct BulkReceipt {
  uint64_t bytes = 0;      // content bytes received
  bool directory = false;  // a folder (else a file)
  int lock_fd = -1;        // on success: holds `temp`'s lock (LockTemp); close after installing
};

// Connects to the bulk server at `addr` (named `server` in errors), asks for `hash` presenting
// `token` (comm/bulk_token.h; a refusal is PermissionDenied) and writes what arrives into `temp`,
// which it creates: a file, or a folder with its tree, locked for RemoveStaleTemps. Does not verify
// the hash. Fails when the server sends nothing for `idle_timeout`; calls `progress(done, total)`
// (if set) a few times a second. On an error `temp` may exist, partly written: the caller removes
// it.
absl::Status FetchIntoTemp(const std::string& server, const SockAddr& addr, const std::string& hash,
                           const std::string& token, const std::string& temp,
                           absl::Duration idle_timeout,
                           const std::function<void(uint64_t, uint64_t)>& progress,
                           BulkReceipt* receipt);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_RECEIVER_H_
