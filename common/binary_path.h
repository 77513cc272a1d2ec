// Finds another tunefleet binary from the running one, so that hpo can start a head and an
// agent and an agent can start trainers without the user naming paths. `target` is the Bazel
// path under bazel-bin, e.g. "launcher/head/head". Looked for, in order:
//   $TUNEFLEET_BIN_DIR/NAME                     (explicit)
//   <self>.runfiles/tunefleet/<target>          (bazel run / bazel test, with a data dep)
//   <bazel-bin>/<target>                        (bazel-bin/hpo/hpo beside bazel-bin/launcher/...)
//   <dir of self>/NAME                          (CMake's bin/ folder, an installed PREFIX/bin)
// where NAME is the last path component of `target`.
#ifndef TUNEFLEET_COMMON_BINARY_PATH_H_
#define TUNEFLEET_COMMON_BINARY_PATH_H_

#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

absl::StatusOr<std::string> FindSiblingBinary(const std::string& target);
// The running binary's absolute path (/proc/self/exe).
std::string SelfPath();

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_BINARY_PATH_H_
