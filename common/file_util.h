// Small POSIX file-system helpers: errno statuses, whole-file reads, atomic writes, paths,
// folders, atomic swaps, recursive removal.
// Deliberately not std::filesystem: PyTorch's LibTorch builds export std::filesystem symbols
// compiled by another libstdc++ (its build toolchain links them in statically), and a binary
// linked with LibTorch then calls those; std::filesystem::remove_all crashed so on the GPU host
// (LibTorch 2.11, g++ 13). These helpers use only libc.
// Errors are one line naming the path. Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_COMMON_FILE_UTIL_H_
#define TUNEFLEET_COMMON_FILE_UTIL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/errno_status.h"

namespace tunefleet {

// ErrnoStatus(err, what): common/errno_status.h, included here for the callers of this file.

// The whole file, bytes as they are. Errors: "PATH: cannot open: ..." (code from errno, so a
// missing file is NotFound) or "PATH: cannot read: ...".
absl::StatusOr<std::string> ReadFile(const std::string& path);

// The last `bytes` of a file (not followed through a link), from its first whole line on when it
// is cut; "" when unreadable. For the stderr tails of trials' logs.
std::string FileTail(const std::string& path, size_t bytes);

// Writes `contents` to `path` so that a reader sees the old file or the whole new one, never a
// part: a temporary file in the same folder (NAME.tmp.XXXXXX), write, fsync, rename(2) over
// `path`, then fsync of the folder (best effort) so the rename survives a power cut.
// The folder is opened by common/safe_path.h's rule (a folder on the way or an existing `path`
// that another user planted is refused, PermissionDenied naming it), the temporary file is
// created there with O_CREAT | O_EXCL | O_NOFOLLOW, and the rename happens under that same
// folder's descriptor (a link at `path` is replaced, never followed). The file gets `mode` less
// the umask, from its creation on (0600 for secrets: no reader ever sees the contents with wider
// permissions). On an error `path` is untouched and the temporary file is removed.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 mode_t mode = 0666);

// The streaming form of WriteFileAtomically, for contents too large to hold at once:
//   AtomicFile file(path);
//   RETURN_IF_ERROR(file.Open());
//   RETURN_IF_ERROR(file.Append(data, size));   // any number of times
//   return file.Commit();
// The temporary file is removed if Commit() is not reached or fails. Not thread-safe.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, mode_t mode = 0666);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  absl::Status Open();
  absl::Status Append(const char* data, size_t size);
  absl::Status Commit();

 private:
  std::string path_;
  mode_t mode_;
  std::string name_;  // the last component of path_
  std::string tmp_;   // the temporary file's name in the folder, while it exists
  int dir_fd_ = -1;   // the folder, opened by the safe_path rule
  int fd_ = -1;
};

// "dir" + "/" + "name" (no doubled slash).
std::string JoinPath(const std::string& dir, const std::string& name);
// The last component of `path` ("a/b.txt" -> "b.txt").
std::string BaseName(const std::string& path);

bool IsFile(const std::string& path);
bool IsDir(const std::string& path);
bool PathExists(const std::string& path);
absl::StatusOr<uint64_t> FileSize(const std::string& path);

// mkdir -p by common/safe_path.h's rule (MakeSafeDirs): new folders get 0777 less the umask; a
// folder on the way that another user planted is refused (PermissionDenied naming it); a
// component that is not a folder is InvalidArgument "PATH: not a folder".
absl::Status MakeDirs(const std::string& dir);
// rm -rf: removes `path` and everything below it (symbolic links themselves, never their
// targets); a missing path is fine.
absl::Status RemoveTree(const std::string& path);
// rename(2): atomic within one file system.
absl::Status RenamePath(const std::string& from, const std::string& to);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_FILE_UTIL_H_
