#include "common/safe_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errno_status.h"

namespace tunefleet {
namespace {

absl::Status Refuse(const std::string& path, absl::string_view why) {
  return absl::PermissionDeniedError(absl::StrCat(path, ": ", why, "; refusing to use it"));
}

absl::Status Errno(int err, const std::string& path, absl::string_view what) {
  return ErrnoStatus(err, absl::StrCat(path, ": ", what));
}

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// `path` made absolute against the working directory, split into its components ("" and "."
// dropped).
absl::StatusOr<std::vector<std::string>> Components(const std::string& path) {
  std::string absolute = path;
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      return Errno(errno, path, "cannot read the working directory");
    }
    absolute = absl::StrCat(cwd, "/", path);
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(absolute, '/', absl::SkipEmpty())) {
    if (part != ".") parts.emplace_back(part);
  }
  return parts;
}

enum class WalkMode { kOpen, kCreate, kCheck };

// Steps from the folder open as `fd` (stat `folder`, named `folder_path`) into its entry `name`
// by the rule. Returns the new folder's O_PATH descriptor, or -1 in kCheck mode when the entry
// is missing (the rest of the path does not exist either).
absl::StatusOr<int> Step(int fd, const struct stat& folder, const std::string& folder_path,
                         const std::string& name, WalkMode mode) {
  const std::string path = folder_path == "/" ? "/" + name : absl::StrCat(folder_path, "/", name);
  if (name == "..") {
    const int up = ::openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (up < 0) return Errno(errno, path, "cannot open folder");
    return up;
  }
  struct stat entry;
  if (::fstatat(fd, name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    if (err != ENOENT) return Errno(err, path, "cannot stat");
    if (mode == WalkMode::kCheck) {
      if (absl::Status s = CheckEntry(path, folder_path, folder, nullptr, ::geteuid(), ::getegid());
          !s.ok()) {
        return s;
      }
      return -1;
    }
    if (mode == WalkMode::kOpen) return absl::NotFoundError(absl::StrCat(path, ": no such folder"));
    if (absl::Status s = CheckEntry(path, folder_path, folder, nullptr, ::geteuid(), ::getegid());
        !s.ok()) {
      return s;
    }
    if (::mkdirat(fd, name.c_str(), 0777) != 0 && errno != EEXIST) {
      return Errno(errno, path, "cannot create folder");
    }
    // Made by us, or by someone just before us: the entry is checked below either way.
    if (::fstatat(fd, name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) {
      return Errno(errno, path, "cannot stat");
    }
  }
  if (absl::Status s = CheckEntry(path, folder_path, folder, &entry, ::geteuid(), ::getegid());
      !s.ok()) {
    return s;
  }
  const bool link = S_ISLNK(entry.st_mode);
  if (!link && !S_ISDIR(entry.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a folder"));
  }
  // A link the rule trusts is followed; anything else is opened as the very entry checked.
  const int next =
      ::openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | (link ? 0 : O_NOFOLLOW));
  if (next < 0) {
    const int err = errno;
    if (err == ENOTDIR) return absl::InvalidArgumentError(absl::StrCat(path, ": not a folder"));
    return Errno(err, path, "cannot open folder");
  }
  struct stat opened;
  if (!link && (::fstat(next, &opened) != 0 || opened.st_dev != entry.st_dev ||
                opened.st_ino != entry.st_ino)) {
    ::close(next);
    return Refuse(path, "changed while it was being opened");
  }
  return next;
}

// Opens the folder named by `parts` step by step from "/"; kCheck returns -1 at the first
// missing entry.
absl::StatusOr<int> Walk(const std::vector<std::string>& parts, WalkMode mode) {
  int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "/", "cannot open folder");
  std::string folder_path = "/";
  for (const std::string& name : parts) {
    struct stat folder;
    if (::fstat(fd, &folder) != 0) {
      const int err = errno;
      ::close(fd);
      return Errno(err, folder_path, "cannot stat");
    }
    absl::StatusOr<int> next = Step(fd, folder, folder_path, name, mode);
    ::close(fd);
    if (!next.ok() || *next < 0) return next;
    fd = *next;
    folder_path = folder_path == "/" ? "/" + name : absl::StrCat(folder_path, "/", name);
  }
  return fd;
}

// The last component of a file's path; "" when the path names a folder ("a/b/", "/", "").
std::string FileName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool OthersCanWrite(const struct stat& folder, uid_t uid, gid_t gid) {
  if (folder.st_uid != uid && folder.st_uid != 0) return true;  // its owner can chmod it
  if ((folder.st_mode & S_IWOTH) != 0) return true;
  return (folder.st_mode & S_IWGRP) != 0 && folder.st_gid != gid;
}

absl::Status CheckEntry(const std::string& path, const std::string& folder_path,
                        const struct stat& folder, const struct stat* entry, uid_t uid, gid_t gid) {
  if (!OthersCanWrite(folder, uid, gid)) return absl::OkStatus();
  const std::string where =
      absl::StrCat(folder_path, " (mode ", Octal(folder.st_mode), ", uid ", folder.st_uid, ")");
  if ((folder.st_mode & S_ISVTX) == 0) {
    return Refuse(path, absl::StrCat("its folder ", where,
                                     " can be written by other users and is not sticky"));
  }
  if (entry == nullptr) return absl::OkStatus();  // the caller creates it exclusively
  if (entry->st_uid != uid && entry->st_uid != 0) {
    return Refuse(path, absl::StrCat(S_ISLNK(entry->st_mode) ? "is a symbolic link that " : "",
                                     "belongs to uid ", entry->st_uid, " (not to uid ", uid,
                                     "), in ", where, ", which other users can write"));
  }
  if (S_ISREG(entry->st_mode) && entry->st_nlink > 1) {
    return Refuse(path, absl::StrCat("has ", entry->st_nlink, " hard links, in ", where,
                                     ", which other users can write"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> OpenSafeDir(const std::string& dir, bool create) {
  absl::StatusOr<std::vector<std::string>> parts = Components(dir);
  if (!parts.ok()) return parts.status();
  return Walk(*parts, create ? WalkMode::kCreate : WalkMode::kOpen);
}

absl::Status MakeSafeDirs(const std::string& dir) {
  absl::StatusOr<int> fd = OpenSafeDir(dir, /*create=*/true);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  return absl::OkStatus();
}

absl::StatusOr<int> OpenSafeFileAt(int dir_fd, const std::string& name, const std::string& path,
                                   int flags, mode_t mode) {
  if (name.empty() || name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat(path, ": names a folder, not a file"));
  }
  struct stat folder;
  if (::fstat(dir_fd, &folder) != 0) return Errno(errno, FolderOf(path), "cannot stat");
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  const int open_flags = (flags & ~(O_CREAT | O_EXCL)) | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
  // Two rounds: a file that appears between our look and our exclusive create is looked at again.
  for (int round = 0; round < 2; ++round) {
    struct stat entry;
    if (::fstatat(dir_fd, name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(entry.st_mode)) {
        return absl::PermissionDeniedError(
            absl::StrCat(path, ": is a symbolic link; refusing to write through it"));
      }
      if (!S_ISREG(entry.st_mode)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": is not a regular file"));
      }
      if (absl::Status s = CheckEntry(path, FolderOf(path), folder, &entry, uid, gid); !s.ok()) {
        return s;
      }
      const int fd = ::openat(dir_fd, name.c_str(), open_flags);
      if (fd < 0) {
        const int err = errno;
        if (err == ENOENT && (flags & O_CREAT) != 0) continue;  // removed meanwhile
        if (err == ELOOP) continue;                             // swapped for a link: look again
        return Errno(err, path, "cannot open");
      }
      struct stat opened;
      if (::fstat(fd, &opened) != 0 || opened.st_dev != entry.st_dev ||
          opened.st_ino != entry.st_ino) {
        ::close(fd);
        return Refuse(path, "changed while it was being opened");
      }
      return fd;
    }
    const int err = errno;
    if (err != ENOENT) return Errno(err, path, "cannot stat");
    if ((flags & O_CREAT) == 0) return Errno(err, path, "cannot open");
    if (absl::Status s = CheckEntry(path, FolderOf(path), folder, nullptr, uid, gid); !s.ok()) {
      return s;
    }
    const int fd = ::openat(dir_fd, name.c_str(), open_flags | O_CREAT | O_EXCL, mode);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return Errno(errno, path, "cannot create");
  }
  return Refuse(path, "kept changing while it was being opened");
}

absl::StatusOr<int> OpenSafeFile(const std::string& path, int flags, mode_t mode,
                                 bool make_folders) {
  const std::string name = FileName(path);
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": names a folder, not a file"));
  }
  absl::StatusOr<int> dir = OpenSafeDir(FolderOf(path), make_folders);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<int> fd = OpenSafeFileAt(*dir, name, path, flags, mode);
  ::close(*dir);
  return fd;
}

absl::StatusOr<std::FILE*> OpenSafeStream(const std::string& path, bool append) {
  absl::StatusOr<int> fd = OpenSafeFile(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC));
  if (!fd.ok()) return fd.status();
  std::FILE* file = ::fdopen(*fd, append ? "a" : "w");
  if (file == nullptr) {
    const int err = errno;
    ::close(*fd);
    return Errno(err, path, "cannot open");
  }
  return file;
}

absl::Status CheckSafePath(const std::string& path) {
  absl::StatusOr<std::vector<std::string>> parts = Components(path);
  if (!parts.ok()) return parts.status();
  if (parts->empty()) return absl::OkStatus();  // "/"
  const std::string name = parts->back();
  parts->pop_back();
  absl::StatusOr<int> dir = Walk(*parts, WalkMode::kCheck);
  if (!dir.ok()) return dir.status();
  if (*dir < 0) return absl::OkStatus();  // a folder on the way is missing: created later
  struct stat folder, entry;
  absl::Status s = absl::OkStatus();
  if (::fstat(*dir, &folder) != 0) {
    s = Errno(errno, FolderOf(path), "cannot stat");
  } else if (::fstatat(*dir, name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) {
    s = errno == ENOENT
            ? CheckEntry(path, FolderOf(path), folder, nullptr, ::geteuid(), ::getegid())
            : Errno(errno, path, "cannot stat");
  } else if (S_ISLNK(entry.st_mode)) {
    s = absl::PermissionDeniedError(
        absl::StrCat(path, ": is a symbolic link; refusing to write through it"));
  } else {
    s = CheckEntry(path, FolderOf(path), folder, &entry, ::geteuid(), ::getegid());
  }
  ::close(*dir);
  return s;
}

std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace tunefleet
