#include "common/file_util.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

absl::Status ErrnoError(const std::string& path, absl::string_view what, int err) {
  return ErrnoStatus(err, absl::StrCat(path, ": ", what));
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 ? 0 : errno;
}

}  // namespace

absl::Status ErrnoStatus(int err, absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

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
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

absl::Status AtomicFile::Open() {
  std::string pattern = path_ + ".tmp.XXXXXX";
  fd_ = ::mkstemp(pattern.data());
  if (fd_ < 0) return ErrnoError(path_, "cannot create a temporary file", errno);
  tmp_ = pattern;
  return absl::OkStatus();
}

absl::Status AtomicFile::Append(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(tmp_, "write failed", errno);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (::fchmod(fd_, mode_) != 0) return ErrnoError(tmp_, "chmod failed", errno);
  if (::fsync(fd_) != 0) return ErrnoError(tmp_, "fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return ErrnoError(tmp_, "close failed", errno);
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) return ErrnoError(path_, "rename failed", errno);
  tmp_.clear();
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {  // best effort: the rename is durable once the folder is synced
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 mode_t mode) {
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

absl::Status MakeDirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    const std::string prefix = dir.substr(0, i);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError(prefix, "cannot create folder", errno);
    }
  }
  if (!IsDir(dir)) return absl::InvalidArgumentError(absl::StrCat(dir, ": not a folder"));
  return absl::OkStatus();
}

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
