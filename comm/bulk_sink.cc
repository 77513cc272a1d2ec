#include "comm/bulk_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "comm/bulk_cache.h"
#include "comm/bulk_wire.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {

BulkSink::~BulkSink() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

int BulkSink::ReleaseLock() {
  const int fd = lock_fd_;
  lock_fd_ = -1;
  return fd;
}

absl::Status BulkSink::Create(const BulkManifest& manifest, bool directory, uint64_t total) {
  manifest_ = &manifest;
  directory_ = directory;
  if (!directory_) {
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) return ErrnoStatus(errno, absl::StrCat(temp_, ": cannot create"));
    fd_entry_ = 0;
    return Lock();
  }
  uint64_t sum = 0;
  if (::mkdir(temp_.c_str(), 0755) != 0) {
    return ErrnoStatus(errno, absl::StrCat(temp_, ": cannot create folder"));
  }
  if (absl::Status s = Lock(); !s.ok()) return s;
  for (const BulkManifest::Entry& e : manifest.entries()) {
    if (!SafeRelativePath(e.path())) {
      return absl::DataLossError(
          absl::StrCat("bulk server ", server_, " sent an unsafe path '", e.path(), "'"));
    }
    const std::string path = JoinPath(temp_, e.path());
    if (e.directory()) {
      if (absl::Status s = MakeDirs(path); !s.ok()) return s;
      continue;
    }
    sum += e.size();
    const size_t slash = path.rfind('/');
    if (absl::Status s = MakeDirs(path.substr(0, slash)); !s.ok()) return s;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus(errno, absl::StrCat(path, ": cannot create"));
    ::close(fd);
  }
  if (sum != total) {
    return absl::DataLossError(
        absl::StrCat("bulk server ", server_, " sent a manifest of ", sum, " bytes for ", total));
  }
  return absl::OkStatus();
}

// Marks the temporary as in use for RemoveStaleTemps, until this object is destroyed.
absl::Status BulkSink::Lock() {
  absl::StatusOr<int> fd = LockTemp(temp_);
  if (!fd.ok()) return fd.status();
  lock_fd_ = *fd;
  return absl::OkStatus();
}

absl::Status BulkSink::Write(int entry, uint64_t offset, const char* data, size_t length) {
  const std::string path = directory_ ? JoinPath(temp_, manifest_->entries(entry).path()) : temp_;
  if (fd_entry_ != entry) {
    absl::Status s = Close();
    if (!s.ok()) return s;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) return ErrnoStatus(errno, absl::StrCat(path, ": cannot open"));
    fd_entry_ = entry;
  }
  return WriteFully(fd_, data, length, offset, path);
}

absl::Status BulkSink::Close() {
  if (fd_ < 0) return absl::OkStatus();
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  fd_entry_ = -1;
  if (!closed) return ErrnoStatus(errno, absl::StrCat(temp_, ": cannot write"));
  return absl::OkStatus();
}

}  // namespace comm
}  // namespace tunefleet
