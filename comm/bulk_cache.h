// A content-addressed cache folder for bulk transfers (comm/bulk_fetch.h FetchToCache):
// CACHE/<sha256hex> is a file or a folder whose content hash (comm/content_hash.h) is its name.
//
// Invariant (across processes and crashes): an entry appears under its final name only after
// its hash was verified, by one rename(2) from a temporary name in the same folder
// (CACHE/.<hash>.tmp.<pid>.<n>), so a reader never sees a partial entry under that name.
// Nothing is fsync'ed: an entry damaged by a power loss (renamed, data not yet on disk) fails
// the hash check that every reuse makes (CheckCacheEntry), and is fetched again.
// Temporaries of processes that no longer run are removed by the next fetch of that hash; a
// fetch holds a lock on its temporary, so one in another PID namespace is left alone.
// Several processes may fetch the same hash into one cache at once: each installs a verified
// copy, and the folder case keeps the first.
//
// Thread-safety: stateless functions (the file system is shared; see the invariant).
#ifndef TUNEFLEET_COMM_BULK_CACHE_H_
#define TUNEFLEET_COMM_BULK_CACHE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {
namespace comm {

// CACHE/<hash>.
std::string CacheEntryPath(const std::string& cache_dir, const std::string& hash);

enum class CacheState { kMissing, kValid, kCorrupt };
struct CacheCheck {
  CacheState state = CacheState::kMissing;
  bool directory = false;
  std::string actual_hash;  // kCorrupt: what the entry hashes to ("" when unreadable)
};
// Hashes CACHE/<hash> if present.
CacheCheck CheckCacheEntry(const std::string& cache_dir, const std::string& hash);

// A fresh temporary name for `hash` in CACHE (not created).
std::string NewTempPath(const std::string& cache_dir, const std::string& hash);

// Takes an exclusive flock(2) on a temporary (file or folder) the caller just created; the
// returned descriptor holds it until closed (or the process ends).
absl::StatusOr<int> LockTemp(const std::string& temp);

// Removes CACHE/.<hash>.tmp.<pid>.* whose process is gone (or a zombie) and whose lock is free.
void RemoveStaleTemps(const std::string& cache_dir, const std::string& hash);

// Verifies that `temp` hashes to `hash`, then renames it to CACHE/<hash>, replacing a corrupt
// entry there. On a mismatch `temp` is removed and the error (kDataLoss) names `source`, the
// expected and the actual hash. `verify_seconds`, when given, receives the hashing time.
absl::Status InstallEntry(const std::string& temp, const std::string& cache_dir,
                          const std::string& hash, const std::string& source,
                          double* verify_seconds = nullptr);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_CACHE_H_
