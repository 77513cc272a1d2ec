#include "common/file_util.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

absl::Status ErrnoError(const std::string& path, const char* what, int err) {
  const std::string message = absl::StrCat(path, ": ", what, ": ", std::strerror(err));
  return err == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path) == 0 ? 0 : errno;
}

}  // namespace

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
    return ErrnoError(from, absl::StrCat("cannot rename to ", to).c_str(), errno);
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
