#include "comm/bulk_token.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/file_util.h"

namespace tunefleet {
namespace comm {

absl::StatusOr<std::string> NewBulkToken() {
  std::string token(kBulkTokenBytes, '\0');
  size_t filled = 0;
  while (filled < token.size()) {
    const ssize_t n = ::getrandom(&token[filled], token.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoStatus(errno, "cannot make a bulk token: getrandom");
    filled += static_cast<size_t>(n);
  }
  return token;
}

bool SameBulkToken(absl::string_view presented, absl::string_view expected) {
  if (expected.empty() || presented.size() != expected.size()) return false;
  volatile unsigned char diff = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(presented[i] ^ expected[i]);
  }
  return diff == 0;
}

absl::StatusOr<std::string> ReadBulkTokenFile(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ErrnoStatus(errno, absl::StrCat(path, ": cannot stat"));
  if ((st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "token file %s is accessible by group or others (mode %04o): it must be private; run "
        "chmod 600 %s",
        path, st.st_mode & 07777, path));
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const absl::string_view hex = absl::StripAsciiWhitespace(*text);
  bool hex_only = hex.size() == 2 * kBulkTokenBytes;
  for (char c : hex) hex_only = hex_only && absl::ascii_isxdigit(static_cast<unsigned char>(c));
  if (!hex_only) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a bulk token (", 2 * kBulkTokenBytes, " hex digits, as `bulk serve` writes)"));
  }
  return absl::HexStringToBytes(hex);
}

absl::Status WriteBulkTokenFile(const std::string& path, absl::string_view token) {
  return WriteFileAtomically(path, absl::StrCat(absl::BytesToHexString(token), "\n"), 0600);
}

}  // namespace comm
}  // namespace tunefleet
