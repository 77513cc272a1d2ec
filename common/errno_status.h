// An errno as an absl::Status, the one mapping every file operation of the project uses
// (common/file_util.h, common/safe_path.h).
// Thread-safety: stateless.
#ifndef TUNEFLEET_COMMON_ERRNO_STATUS_H_
#define TUNEFLEET_COMMON_ERRNO_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

// "WHAT: strerror(err)" with a code from `err`: ENOENT NotFound, EACCES/EPERM PermissionDenied,
// EEXIST AlreadyExists, ENOSPC/EDQUOT ResourceExhausted, anything else Internal. `what` usually
// starts with the path ("/x/y: cannot open"). Pass errno itself, read before any other call.
absl::Status ErrnoStatus(int err, absl::string_view what);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_ERRNO_STATUS_H_
