#include "hpo/config/sweep_flags.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "comm/curve_auth.h"
#include "comm/endpoint.h"
#include "common/clip.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace hpo {
namespace {

absl::Status BadHead(const std::string& endpoint, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("--head '", ClipValue(endpoint), "': ", why,
                                                 " (expected tcp://HOST:PORT or ipc://PATH)"));
}

bool ValidHostChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

}  // namespace

absl::Status CheckHeadEndpoint(const std::string& endpoint) {
  if (absl::StartsWith(endpoint, "ipc://")) {
    const std::string path = endpoint.substr(6);
    if (path.empty()) return BadHead(endpoint, "no socket path after ipc://");
    for (char c : path) {
      if (c == '\0' || c == '\n') {
        return BadHead(endpoint, "the socket path holds a control character");
      }
    }
    return absl::OkStatus();
  }
  if (!absl::StartsWith(endpoint, "tcp://")) return BadHead(endpoint, "unknown transport");
  const std::string rest = endpoint.substr(6);
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos) return BadHead(endpoint, "no :PORT");
  const std::string host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (host.empty()) return BadHead(endpoint, "no host");
  if (host.front() == '[') {
    // [IPv6]
    if (host.size() < 3 || host.back() != ']') return BadHead(endpoint, "bad [IPv6] host");
    for (size_t i = 1; i + 1 < host.size(); ++i) {
      const char c = host[i];
      // Hex digits, ':' and '.', and a zone after '%' (fe80::1%eth0).
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != ':' && c != '.' && c != '%') {
        return BadHead(endpoint, "bad [IPv6] host");
      }
    }
  } else {
    if (host.size() > 253) return BadHead(endpoint, "the host name is longer than 253 characters");
    for (char c : host) {
      if (!ValidHostChar(c)) return BadHead(endpoint, "bad host name");
    }
  }
  int64_t number = 0;
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && absl::ascii_isdigit(static_cast<unsigned char>(c));
  if (!digits || !absl::SimpleAtoi(port, &number)) {
    return BadHead(endpoint, "the port is not a number");
  }
  if (number < 1 || number > 65535) return BadHead(endpoint, "the port is not in 1-65535");
  return absl::OkStatus();
}

absl::Status CheckSweepFlags(const SweepFlags& f) {
  if (!f.head.empty()) RETURN_IF_ERROR(CheckHeadEndpoint(f.head));
  // Another user's private socket: refused now, not after waiting for a head that cannot
  // answer us (a missing socket may yet appear: the connect waits for it).
  if (f.head.rfind("ipc://", 0) == 0) {
    absl::Status reachable = comm::CheckIpcReachable(f.head.substr(6));
    if (absl::IsPermissionDenied(reachable)) {
      return absl::PermissionDeniedError(absl::StrCat("--head: ", reachable.message()));
    }
  }
  if (!f.keys.empty() && f.head.empty()) {
    return absl::InvalidArgumentError(
        "--keys needs --head (dev mode's local head runs without keys)");
  }
  if (!f.keys.empty()) {
    // Unreadable, malformed or too open (comm/curve_auth.h): refused before anything starts.
    absl::StatusOr<comm::ClientKeys> keys = comm::LoadClientKeys(f.keys);
    if (!keys.ok()) return keys.status();
  }
  if (f.slots < 0 || f.slots > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slots must be between 0 and 4096 (the agent's limit), got ", f.slots));
  }
  if (f.head_grace_s < 0) return absl::InvalidArgumentError("--head_grace_s must be >= 0");
  if (!(f.max_failed_share >= 0.0 && f.max_failed_share <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_failed_share must be in [0, 1], got ", f.max_failed_share));
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
