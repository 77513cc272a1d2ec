// Runtime folders that another user cannot hijack: where each process keeps its sockets,
// locks and logs by default.
//
//   RuntimeDir()             $XDG_RUNTIME_DIR/tunefleet when XDG_RUNTIME_DIR is set and is a
//                            folder of this user's, else /tmp/tunefleet-UID (UID: the effective
//                            uid); created 0700 when missing.
//   PrivateDir(PATH)         mkdir -m 0700 PATH (its parent must exist), then refuses PATH unless
//                            it is a real folder (no symbolic link), owned by this user, with no
//                            access for group or others. A folder another user made first, or
//                            a link planted in its place, is an error naming it and the reason.
//   OpenPrivateFile(PATH)    open(2) with O_NOFOLLOW | O_CLOEXEC (a symbolic link is refused);
//                            `create`: O_CREAT, mode 0600.
//
// The rule of the project (docs/ARCHITECTURE.md, "Invariants across processes"): runtime files
// live in folders the process owns; never a shared, predictable /tmp path used as it is found.
// Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_COMMON_RUNTIME_DIR_H_
#define TUNEFLEET_COMMON_RUNTIME_DIR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

absl::StatusOr<std::string> RuntimeDir();
// RuntimeDir()/NAME, made private (PrivateDir). NAME is one path component.
absl::StatusOr<std::string> RuntimeSubdir(const std::string& name);
absl::Status PrivateDir(const std::string& path);
// Checks an existing folder as PrivateDir does, without creating it.
absl::Status CheckPrivateDir(const std::string& path);

// O_NOFOLLOW | O_CLOEXEC | `flags` (O_RDONLY, O_WRONLY | O_APPEND, ...); with `create`,
// O_CREAT and mode 0600. The descriptor, or an error naming the path ("is a symbolic link"
// when it is one).
absl::StatusOr<int> OpenPrivateFile(const std::string& path, int flags, bool create);

// Whether `name` can name a folder or file of its own: 1-64 characters of letters, digits,
// '.', '-', '_', not "." or "..". An agent's name is one.
bool SafeName(const std::string& name);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_RUNTIME_DIR_H_
