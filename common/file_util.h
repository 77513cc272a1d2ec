// Small POSIX file-system helpers: paths, folders, atomic swaps, recursive removal.
// Deliberately not std::filesystem: PyTorch's LibTorch builds export std::filesystem symbols
// compiled by another libstdc++ (its build toolchain links them in statically), and a binary
// linked with LibTorch then calls those; std::filesystem::remove_all crashed so on the GPU host
// (LibTorch 2.11, g++ 13). These helpers use only libc.
// Errors are one line naming the path. Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_COMMON_FILE_UTIL_H_
#define TUNEFLEET_COMMON_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunefleet {

// "dir" + "/" + "name" (no doubled slash).
std::string JoinPath(const std::string& dir, const std::string& name);
// The last component of `path` ("a/b.txt" -> "b.txt").
std::string BaseName(const std::string& path);

bool IsFile(const std::string& path);
bool IsDir(const std::string& path);
bool PathExists(const std::string& path);
absl::StatusOr<uint64_t> FileSize(const std::string& path);

// mkdir -p.
absl::Status MakeDirs(const std::string& dir);
// rm -rf: removes `path` and everything below it (symbolic links themselves, never their
// targets); a missing path is fine.
absl::Status RemoveTree(const std::string& path);
// rename(2): atomic within one file system.
absl::Status RenamePath(const std::string& from, const std::string& to);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_FILE_UTIL_H_
