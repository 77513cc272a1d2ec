// Writing files and folders where another user may have planted a link: a sweep's folder in a
// sticky /tmp subfolder, a group's shared folder. Every write of the project's outputs (the
// journal, its HTML report, trial folders, metrics, models, TensorBoard events, logs) goes
// through here, directly or through common/file_util.h (MakeDirs, AtomicFile).
//
// The rule, for each entry of a path (each folder on the way, and the file itself):
// - its folder is one no other user can write: anything in it is as trusted as we are; or
// - its folder is sticky (mode +t, as /tmp) and the entry belongs to us or to root, or does not
//   exist yet (then we create it exclusively: mkdir, or O_CREAT | O_EXCL, so what we use is ours);
// - otherwise (a folder other users can write and not sticky, or another user's entry in a
//   sticky one) the path is refused: PermissionDenied, one line naming it and why, and nothing is
//   written. A regular file with several hard links in such a folder is refused too.
// "Another user can write the folder": it belongs to a uid other than ours and root's, or others
// may write it, or a group other than our effective gid may (a folder group-writable by our own
// primary group, as with user-private groups and umask 002, counts as ours).
// The walk opens one folder at a time under the folder before it (openat), so nothing can be
// swapped between the check and the use. A link on the way is followed only where the rule
// trusts it; the file itself is never opened through a link (O_NOFOLLOW), whoever made it.
// Relative paths are taken from the working directory, whose own ancestors are checked too.
// ".." components are followed without a check (they climb into folders already on the way).
//
// Modes: files are created with the mode given (0666 by default) and folders 0777, both less
// the process's umask, as open(2) and mkdir(2) do.
// Thread-safety: stateless (the file system is shared). Descriptors returned are O_CLOEXEC and
// the caller's to close.
#ifndef TUNEFLEET_COMMON_SAFE_PATH_H_
#define TUNEFLEET_COMMON_SAFE_PATH_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

// Whether a user other than `uid` (and root) can add, remove or rename entries of a folder with
// this stat (see the rule above; `gid` is our effective gid).
bool OthersCanWrite(const struct stat& folder, uid_t uid, gid_t gid);

// The rule for one entry: `folder` is the stat of the folder holding it, `entry` its lstat
// (nullptr when it does not exist yet). `path` names the entry in the error, `folder_path` its
// folder. OK, or PermissionDenied "PATH: WHY; refusing to use it".
absl::Status CheckEntry(const std::string& path, const std::string& folder_path,
                        const struct stat& folder, const struct stat* entry, uid_t uid, gid_t gid);

// Opens folder `dir` (O_PATH | O_DIRECTORY) after checking each entry on the way by the rule.
// `create`: missing folders are made (mkdir -p, mode 0777 less the umask); otherwise a missing
// one is NotFound "PATH: no such folder". A component that is not a folder is InvalidArgument
// "PATH: not a folder".
absl::StatusOr<int> OpenSafeDir(const std::string& dir, bool create);
// OpenSafeDir(dir, /*create=*/true), closed again: mkdir -p by the rule.
absl::Status MakeSafeDirs(const std::string& dir);

// Opens the file `name` of the folder open as `dir_fd` with `flags` | O_NOFOLLOW | O_CLOEXEC
// (`path` names it in errors). With O_CREAT: a missing file is created exclusively with `mode`
// (less the umask); an existing one is used when the rule allows. Refused: a symbolic link
// ("PATH: is a symbolic link; refusing to write through it"), anything but a regular file, and
// what the rule refuses.
absl::StatusOr<int> OpenSafeFileAt(int dir_fd, const std::string& name, const std::string& path,
                                   int flags, mode_t mode = 0666);
// OpenSafeDir(the file's folder, `make_folders`), then OpenSafeFileAt.
absl::StatusOr<int> OpenSafeFile(const std::string& path, int flags, mode_t mode = 0666,
                                 bool make_folders = false);
// OpenSafeFile for writing as a stdio stream: `append` O_APPEND ("a"), else O_TRUNC ("w").
absl::StatusOr<std::FILE*> OpenSafeStream(const std::string& path, bool append);

// Checks what exists of `path` by the rule without creating or opening anything: each folder on
// the way, and the last entry when it exists (a symbolic link there is refused). For refusing a
// bad output path before any work starts.
absl::Status CheckSafePath(const std::string& path);

// The folder part of `path`: "a/b/f" -> "a/b", "f" -> ".", "/f" -> "/".
std::string FolderOf(const std::string& path);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SAFE_PATH_H_
