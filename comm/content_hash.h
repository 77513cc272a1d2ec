// Content hashes for bulk data (comm/bulk_server.h, comm/bulk_fetch.h): SHA-256 of a byte
// string, of a file, and of a directory tree. A hash names content, not a location: the bulk
// server publishes paths under their hash, and a cache holds each entry under its hash.
//
//   HashFile("train.csv")  == `sha256sum train.csv` (64 lowercase hex digits)
//   HashDirectory("data/") == SHA-256 of a canonical listing of the tree:
//     "tunefleet-dir-v1\0", then for every entry below the folder, sorted bytewise by path
//     relative to it ("a/b.txt"):
//       a folder: "d\0" PATH "\0"
//       a file:   "f\0" PATH "\0" SIZE "\0" SHA256HEX "\0"   (SIZE in decimal)
//   so it depends only on names, sizes and bytes: not on creation order, timestamps, modes or
//   the folder's own name. Symbolic links are followed (a link to a file hashes as that file);
//   sockets, FIFOs and devices are errors, as are trees deeper than kMaxTreeDepth.
//
// SHA-256 uses the CPU's SHA extensions where present (x86-64 SHA-NI), else portable code;
// both give the same digests (tests/comm/content_hash_test.cc). Written here rather than taken
// from OpenSSL so that comm/ needs no further system library on the GPU hosts' CMake build.
// Errors are one line naming the path. Thread-safety: a Sha256 object belongs to one thread;
// the free functions are stateless.
#ifndef TUNEFLEET_COMM_CONTENT_HASH_H_
#define TUNEFLEET_COMM_CONTENT_HASH_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace comm {

inline constexpr int kMaxTreeDepth = 64;

// Incremental SHA-256 (FIPS 180-4).
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  // use_hardware = false forces the portable code (tests compare the two).
  explicit Sha256(bool use_hardware = true);

  void Update(const void* data, size_t size);
  void Update(absl::string_view bytes) { Update(bytes.data(), bytes.size()); }
  // Ends the hash; the object must not be updated afterwards.
  Digest Final();
  std::string FinalHex();

  // True when this CPU has the SHA extensions that Sha256(true) uses.
  static bool HardwareAvailable();

 private:
  void Compress(const uint8_t* blocks, size_t count);

  std::array<uint32_t, 8> state_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
  bool hardware_ = false;
};

// Lowercase hex of a digest.
std::string DigestHex(const Sha256::Digest& digest);
// SHA-256 of `bytes` as lowercase hex.
std::string Sha256Hex(absl::string_view bytes);
// True for 64 lowercase hex digits (what the functions here return).
bool IsContentHash(absl::string_view text);

// One entry of a directory tree, as HashDirectory lists it.
struct TreeEntry {
  std::string path;  // relative to the folder, '/'-separated, no leading "./"
  bool directory = false;
  uint64_t size = 0;  // files only
  std::string hash;   // files only: SHA-256 hex
};

// `size`, when given, receives the number of bytes hashed.
absl::StatusOr<std::string> HashFile(const std::string& path, uint64_t* size = nullptr);
// `entries`, when given, receives the sorted listing the hash was computed from.
absl::StatusOr<std::string> HashDirectory(const std::string& dir,
                                          std::vector<TreeEntry>* entries = nullptr);
// HashFile or HashDirectory, as `path` is a file or a folder (symbolic links followed).
absl::StatusOr<std::string> HashPath(const std::string& path);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_CONTENT_HASH_H_
