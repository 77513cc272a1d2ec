#include "comm/bulk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "comm/content_hash.h"
#include "common/file_util.h"
#include "common/logging.h"

namespace tunefleet {
namespace comm {
namespace {

std::string TempPrefix(const std::string& hash) { return absl::StrCat(".", hash, ".tmp."); }

// False for a process that has ended, zombies included (they hold no locks or files).
bool ProcessRuns(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');  // "pid (comm) S ..."
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

// True when nobody holds the lock of `path` (LockTemp).
bool Unlocked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

}  // namespace

std::string CacheEntryPath(const std::string& cache_dir, const std::string& hash) {
  return JoinPath(cache_dir, hash);
}

CacheCheck CheckCacheEntry(const std::string& cache_dir, const std::string& hash) {
  CacheCheck check;
  const std::string path = CacheEntryPath(cache_dir, hash);
  if (!PathExists(path)) return check;
  check.directory = IsDir(path);
  absl::StatusOr<std::string> actual = HashPath(path);
  if (actual.ok() && *actual == hash) {
    check.state = CacheState::kValid;
  } else {
    check.state = CacheState::kCorrupt;
    if (actual.ok()) check.actual_hash = *actual;
  }
  return check;
}

std::string NewTempPath(const std::string& cache_dir, const std::string& hash) {
  static std::atomic<uint64_t> counter{0};
  return JoinPath(cache_dir, absl::StrCat(TempPrefix(hash), ::getpid(), ".", counter++));
}

absl::StatusOr<int> LockTemp(const std::string& temp) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return absl::InternalError(absl::StrCat(temp, ": cannot lock: ", why));
  }
  return fd;
}

void RemoveStaleTemps(const std::string& cache_dir, const std::string& hash) {
  DIR* d = ::opendir(cache_dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = TempPrefix(hash);
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    absl::string_view name = e->d_name;
    if (!absl::ConsumePrefix(&name, prefix)) continue;
    const std::vector<absl::string_view> parts = absl::StrSplit(name, '.');
    int pid = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &pid) || pid <= 0) continue;
    if (pid == ::getpid() || ProcessRuns(pid)) continue;
    if (Unlocked(JoinPath(cache_dir, e->d_name))) stale.push_back(e->d_name);
  }
  ::closedir(d);
  for (const std::string& name : stale) {
    TF_LOG(INFO) << "removing " << JoinPath(cache_dir, name)
                 << ", left by a fetch that did not finish";
    RemoveTree(JoinPath(cache_dir, name)).IgnoreError();
  }
}

absl::Status InstallEntry(const std::string& temp, const std::string& cache_dir,
                          const std::string& hash, const std::string& source,
                          double* verify_seconds) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> actual = HashPath(temp);
  if (verify_seconds != nullptr) {
    *verify_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (!actual.ok()) {
    RemoveTree(temp).IgnoreError();
    return actual.status();
  }
  if (*actual != hash) {
    RemoveTree(temp).IgnoreError();
    return absl::DataLossError(absl::StrCat("content from ", source, " does not match hash ", hash,
                                            " (it hashes to ", *actual, "); discarded"));
  }
  const std::string final_path = CacheEntryPath(cache_dir, hash);
  if (IsDir(temp) && PathExists(final_path)) {
    // rename(2) cannot replace a non-empty folder: keep a valid entry (another fetch won the
    // race), remove a corrupt one first.
    if (CheckCacheEntry(cache_dir, hash).state == CacheState::kValid) {
      RemoveTree(temp).IgnoreError();
      return absl::OkStatus();
    }
    absl::Status removed = RemoveTree(final_path);
    if (!removed.ok()) {
      RemoveTree(temp).IgnoreError();
      return removed;
    }
  } else if (!IsDir(temp) && IsDir(final_path)) {
    absl::Status removed = RemoveTree(final_path);  // a folder where a file belongs: corrupt
    if (!removed.ok()) {
      RemoveTree(temp).IgnoreError();
      return removed;
    }
  }
  absl::Status renamed = RenamePath(temp, final_path);
  if (!renamed.ok()) {
    RemoveTree(temp).IgnoreError();
    // A concurrent fetch of the same folder may have installed it in between.
    if (CheckCacheEntry(cache_dir, hash).state == CacheState::kValid) return absl::OkStatus();
    return renamed;
  }
  return absl::OkStatus();
}

}  // namespace comm
}  // namespace tunefleet
