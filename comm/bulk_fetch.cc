#include "comm/bulk_fetch.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "comm/bulk_cache.h"
#include "comm/bulk_receiver.h"
#include "comm/bulk_wire.h"
#include "comm/content_hash.h"
#include "comm/ucp_worker.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace tunefleet {
namespace comm {

absl::StatusOr<FetchResult> FetchToCache(const std::string& server_address, const std::string& hash,
                                         const std::string& cache_dir,
                                         const FetchOptions& options) {
  if (!IsContentHash(hash)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", hash, "' is not a content hash (64 lowercase hex digits)"));
  }
  absl::Status s = MakeDirs(cache_dir);
  if (!s.ok()) return s;
  FetchResult result;
  result.path = CacheEntryPath(cache_dir, hash);
  auto start = BulkClock::now();
  const CacheCheck check = CheckCacheEntry(cache_dir, hash);
  if (check.state == CacheState::kValid) {
    result.reused = true;
    result.directory = check.directory;
    result.verify_seconds = SecondsSince(start);
    return result;
  }
  if (check.state == CacheState::kCorrupt) {
    TF_LOG(WARNING) << "cache entry " << result.path << " does not verify"
                    << (check.actual_hash.empty() ? ""
                                                  : " (it hashes to " + check.actual_hash + ")")
                    << "; fetching it again";
    result.replaced_corrupt = true;
  }
  RemoveStaleTemps(cache_dir, hash);
  absl::StatusOr<SockAddr> addr = ParseHostPort(server_address);
  if (!addr.ok()) return addr.status();

  const std::string temp = NewTempPath(cache_dir, hash);
  start = BulkClock::now();
  BulkReceipt receipt;
  s = FetchIntoTemp(server_address, *addr, hash, options.token, temp, options.idle_timeout,
                    options.progress, &receipt);
  result.bytes = receipt.bytes;
  result.directory = receipt.directory;
  result.transfer_seconds = SecondsSince(start);
  if (!s.ok()) {
    RemoveTree(temp).IgnoreError();
    return s;
  }
  s = InstallEntry(temp, cache_dir, hash, absl::StrCat("bulk server ", server_address),
                   &result.verify_seconds);
  ::close(receipt.lock_fd);  // held until the temporary is installed or removed
  if (!s.ok()) return s;
  return result;
}

}  // namespace comm
}  // namespace tunefleet
