#include "trainer/model/checkpoint_cache.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "trainer/model/st_modules.h"

namespace tunefleet {
namespace trainer {
namespace {

// What says a file is unchanged: an atomic rewrite changes the inode, an in-place one the
// size or the modification time.
struct FileStamp {
  std::string path;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;

  bool operator==(const FileStamp& o) const {
    return path == o.path && exists == o.exists && dev == o.dev && ino == o.ino && size == o.size &&
           mtime_sec == o.mtime_sec && mtime_nsec == o.mtime_nsec;
  }
};

FileStamp Stamp(const std::string& path) {
  FileStamp s;
  s.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime_sec = st.st_mtim.tv_sec;
  s.mtime_nsec = st.st_mtim.tv_nsec;
  return s;
}

std::vector<FileStamp> StampAll(const std::vector<std::string>& paths) {
  std::vector<FileStamp> out;
  out.reserve(paths.size());
  for (const std::string& p : paths) out.push_back(Stamp(p));
  return out;
}

// The files whose change invalidates an entry: those that decide the weights and the config.
std::vector<std::string> FixedFiles(const std::string& dir) {
  return {JoinPath(dir, "config.json"), JoinPath(dir, "model.safetensors"),
          JoinPath(dir, "model.safetensors.index.json")};
}

struct Entry {
  std::string dir;  // canonical
  std::vector<FileStamp> stamps;
  BertCheckpoint checkpoint;
};

std::atomic<bool> g_enabled{false};
std::mutex g_mu;
std::optional<Entry>& CachedEntry() {
  static auto* entry = new std::optional<Entry>();  // never destroyed: no exit-time order issue
  return *entry;
}

// A copy of `c` whose tensors own their memory.
// One thread's memcpy per tensor, not clone(), which copies with LibTorch's intra-op threads:
// the ranks of a multi-GPU trial are workers with a thread per core each, and they copy at once
// (4 warm ranks on a 64-core host spent 3 s in the model phase, fresh ones 0.45 s).
BertCheckpoint CopyOf(const BertCheckpoint& c) {
  BertCheckpoint out = c;  // the tensors still shared
  for (auto& [name, t] : out.tensors) {
    if (!t.is_contiguous() || t.device().type() != c10::kCPU) {
      t = t.clone(at::MemoryFormat::Contiguous);
      continue;
    }
    torch::Tensor copy = torch::empty_like(t, at::MemoryFormat::Contiguous);
    std::memcpy(copy.data_ptr(), t.data_ptr(), t.nbytes());
    t = copy;
  }
  return out;
}

std::optional<std::string> Canonical(const std::string& dir) {
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

}  // namespace

void EnableCheckpointCache(bool on) {
  g_enabled.store(on);
  if (!on) ClearCheckpointCache();
}

bool CheckpointCacheEnabled() { return g_enabled.load(); }

void ClearCheckpointCache() {
  std::lock_guard<std::mutex> lock(g_mu);
  CachedEntry().reset();
}

absl::StatusOr<BertCheckpoint> LoadBertCheckpointCached(const std::string& dir, bool* hit) {
  if (hit != nullptr) *hit = false;
  const std::optional<std::string> canonical = g_enabled.load() ? Canonical(dir) : std::nullopt;
  if (!canonical.has_value()) return LoadBertCheckpoint(dir);
  std::lock_guard<std::mutex> lock(g_mu);
  std::optional<Entry>& entry = CachedEntry();
  if (entry.has_value() && entry->dir == *canonical) {
    std::vector<std::string> paths;
    for (const FileStamp& s : entry->stamps) paths.push_back(s.path);
    if (StampAll(paths) == entry->stamps) {
      const auto copy_start = std::chrono::steady_clock::now();
      BertCheckpoint out = CopyOf(entry->checkpoint);
      const double copy_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count();
      // Small files a run may rewrite (e.g. SaveBertCheckpoint's pooling): read as a load would.
      ASSIGN_OR_RETURN(StModules modules, ReadStModules(*canonical));
      out.pooling = std::move(modules.pooling);
      out.normalize = modules.normalize;
      out.max_seq_length = modules.max_seq_length;
      out.include_prompt = modules.include_prompt;
      LogCheckpointKeyWarnings(dir, out);  // as a read logs them, in this trial's log
      TF_LOG(INFO) << "model weights of " << dir << " from this worker's host copy (copied in "
                   << absl::StrFormat("%.2f", copy_s) << " s)";
      if (hit != nullptr) *hit = true;
      return out;
    }
  }
  entry.reset();  // one entry at most; free the old one before reading the new
  const std::vector<std::string> fixed = FixedFiles(*canonical);
  const std::vector<FileStamp> before = StampAll(fixed);
  ASSIGN_OR_RETURN(BertCheckpoint checkpoint, LoadBertCheckpoint(dir));
  std::vector<std::string> paths = fixed;
  for (const std::string& f : checkpoint.weight_files) {
    const std::optional<std::string> c = Canonical(f);
    if (c.has_value() && *c != fixed[1]) paths.push_back(*c);
  }
  std::vector<FileStamp> stamps = StampAll(paths);
  // A folder changed while it was read is not cached: the stamps might not match the contents.
  if (!std::equal(before.begin(), before.end(), stamps.begin())) return checkpoint;
  entry = Entry{*canonical, std::move(stamps), CopyOf(checkpoint)};
  return checkpoint;
}

}  // namespace trainer
}  // namespace tunefleet
