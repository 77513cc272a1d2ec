#include "common/runtime_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

absl::Status Refuse(const std::string& path, const std::string& why) {
  return absl::PermissionDeniedError(
      absl::StrCat(path, ": ", why,
                   "; refusing to use it (remove it, or set XDG_RUNTIME_DIR to a folder of "
                   "your own)"));
}

}  // namespace

absl::Status CheckPrivateDir(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) return Refuse(path, "is a symbolic link");
  if (!S_ISDIR(st.st_mode)) return Refuse(path, "is not a folder");
  if (st.st_uid != ::geteuid()) {
    return Refuse(path, absl::StrCat("belongs to uid ", st.st_uid, ", not to uid ", ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
    return Refuse(path, absl::StrCat("has mode ", mode, " (others may write or read it)"));
  }
  return absl::OkStatus();
}

absl::Status PrivateDir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot create folder: ", std::strerror(errno)));
  }
  return CheckPrivateDir(path);
}

absl::StatusOr<std::string> RuntimeDir() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') {
    struct stat st;
    if (::lstat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      const std::string dir = absl::StrCat(xdg, "/tunefleet");
      absl::Status s = PrivateDir(dir);
      if (!s.ok()) return s;
      return dir;
    }
  }
  const std::string dir = absl::StrCat("/tmp/tunefleet-", ::geteuid());
  absl::Status s = PrivateDir(dir);
  if (!s.ok()) return s;
  return dir;
}

absl::StatusOr<std::string> RuntimeSubdir(const std::string& name) {
  if (!SafeName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name.substr(0, 64), "' cannot name a runtime folder"));
  }
  absl::StatusOr<std::string> root = RuntimeDir();
  if (!root.ok()) return root.status();
  const std::string dir = *root + "/" + name;
  absl::Status s = PrivateDir(dir);
  if (!s.ok()) return s;
  return dir;
}

absl::StatusOr<int> OpenPrivateFile(const std::string& path, int flags, bool create) {
  const int fd =
      ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
  if (fd >= 0) return fd;
  const int err = errno;
  if (err == ELOOP) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": is a symbolic link; refusing to open it"));
  }
  return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(err)));
}

bool SafeName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name == "." || name == "..") return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace tunefleet
