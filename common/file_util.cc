#include "common/file_util.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/safe_path.h"

namespace tunefleet {
namespace {

absl::Status ErrnoError(const std::string& path, absl::string_view what, int err) {
  return ErrnoStatus(err, absl::StrCat(path, ": ", what));
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 ? 0 : errno;
}

}  // namespace

std::string FileTail(const std::string& path, size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > static_cast<off_t>(bytes) ? size - static_cast<off_t>(bytes) : 0;
  std::string t(static_cast<size_t>(std::max<off_t>(size - from, 0)), '\0');
  const ssize_t n = size > 0 ? ::pread(fd, t.data(), t.size(), from) : 0;
  ::close(fd);
  t.resize(static_cast<size_t>(std::max<ssize_t>(n, 0)));
  if (from > 0) {
    const size_t nl = t.find('\n');
    if (nl != std::string::npos && nl + 1 < t.size()) t.erase(0, nl + 1);
  }
  return t;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(path, "cannot open", errno);
  std::string out;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoError(path, "cannot read", err);
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

AtomicFile::AtomicFile(std::string path, mode_t mode) : path_(std::move(path)), mode_(mode) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlinkat(dir_fd_, tmp_.c_str(), 0);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

absl::Status AtomicFile::Open() {
  name_ = BaseName(path_);
  if (path_.empty() || path_.back() == '/' || name_ == "." || name_ == "..") {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": names a folder, not a file"));
  }
  absl::StatusOr<int> dir = OpenSafeDir(FolderOf(path_), /*create=*/false);
  if (absl::IsNotFound(dir.status())) {
    return absl::NotFoundError(absl::StrCat(path_, ": cannot create: ", dir.status().message()));
  }
  if (!dir.ok()) return dir.status();
  dir_fd_ = *dir;
  // What the rename will replace must pass the rule too (another user's entry in a sticky
  // folder is theirs); a link there is replaced, not followed, so it may stay ours.
  struct stat folder, entry;
  if (::fstat(dir_fd_, &folder) != 0) return ErrnoError(path_, "cannot stat its folder", errno);
  if (::fstatat(dir_fd_, name_.c_str(), &entry, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(entry.st_mode))
      return absl::InvalidArgumentError(absl::StrCat(path_, ": is a folder"));
    if (absl::Status s =
            CheckEntry(path_, FolderOf(path_), folder, &entry, ::geteuid(), ::getegid());
        !s.ok()) {
      return s;
    }
  } else if (errno != ENOENT) {
    return ErrnoError(path_, "cannot stat", errno);
  } else if (absl::Status s =
                 CheckEntry(path_, FolderOf(path_), folder, nullptr, ::geteuid(), ::getegid());
             !s.ok()) {
    return s;  // a folder others can write that is not sticky
  }
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const uint64_t salt = static_cast<uint64_t>(::getpid()) * 1000003u + counter++ +
                          static_cast<uint64_t>(absl::ToUnixNanos(absl::Now()));
    const std::string tmp =
        absl::StrCat(name_, ".tmp.", absl::Hex(salt % 0xffffff, absl::kZeroPad6));
    fd_ = ::openat(dir_fd_, tmp.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode_);
    if (fd_ >= 0) {
      tmp_ = tmp;
      return absl::OkStatus();
    }
    if (errno != EEXIST) break;
  }
  return ErrnoError(path_, "cannot create a temporary file", errno);
}

absl::Status AtomicFile::Append(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(JoinPath(FolderOf(path_), tmp_), "write failed", errno);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  const std::string tmp_path = JoinPath(FolderOf(path_), tmp_);
  if (::fsync(fd_) != 0) return ErrnoError(tmp_path, "fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return ErrnoError(tmp_path, "close failed", errno);
  if (::renameat(dir_fd_, tmp_.c_str(), dir_fd_, name_.c_str()) != 0) {
    return ErrnoError(path_, "rename failed", errno);
  }
  tmp_.clear();
  // Best effort: the rename is durable once the folder is synced (an O_PATH descriptor cannot
  // be synced; its "." can).
  const int sync_fd = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sync_fd >= 0) {
    ::fsync(sync_fd);
    ::close(sync_fd);
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents, mode_t mode) {
  AtomicFile file(path, mode);
  if (absl::Status s = file.Open(); !s.ok()) return s;
  if (absl::Status s = file.Append(contents.data(), contents.size()); !s.ok()) return s;
  return file.Commit();
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool IsFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

absl::StatusOr<uint64_t> FileSize(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(path, "cannot stat", errno);
  return static_cast<uint64_t>(st.st_size);
}

absl::Status MakeDirs(const std::string& dir) { return MakeSafeDirs(dir); }

absl::Status RemoveTree(const std::string& path) {
  if (!PathExists(path)) return absl::OkStatus();
  const int rc = ::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
  if (rc != 0) return ErrnoError(path, "cannot remove", rc > 0 ? rc : errno);
  return absl::OkStatus();
}

absl::Status RenamePath(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoError(from, absl::StrCat("cannot rename to ", to), errno);
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
