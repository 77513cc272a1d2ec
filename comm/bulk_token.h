// The secret that lets a client fetch from a bulk server (comm/bulk_server.h). UCX has no
// authentication of its own (its socket-address connections accept any peer), so each server
// holds a random token and serves only requests that carry it (BulkRequest.token). Whoever
// starts the server hands the token to its rightful clients over the control plane, which is
// private (an ipc:// socket only this user reaches) or CURVE-encrypted (--keys): the head's
// staging token rides in TrialSpec.stage_token, an agent's fetch-back token in Exit.fetch_token.
// The `bulk` tool keeps it in a private file (--token_file).
//
//   absl::StatusOr<std::string> token = NewBulkToken();   // 32 random bytes
//   ... BulkServer::Start(ip, 0, *token) ...
//   if (!SameBulkToken(request.token(), *token)) refuse;   // constant time
//
// Thread-safety: stateless functions.
#ifndef TUNEFLEET_COMM_BULK_TOKEN_H_
#define TUNEFLEET_COMM_BULK_TOKEN_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace comm {

inline constexpr size_t kBulkTokenBytes = 32;

// kBulkTokenBytes bytes from the kernel's random source (getrandom(2)).
absl::StatusOr<std::string> NewBulkToken();

// True when `presented` equals `expected`, which must be non-empty; the time taken depends
// only on their lengths, never on where they first differ.
bool SameBulkToken(absl::string_view presented, absl::string_view expected);

// A token file: the token in hex and a newline. Reading refuses a file that group or others
// may read or write ("run chmod 600 FILE") and anything but kBulkTokenBytes bytes of hex.
absl::StatusOr<std::string> ReadBulkTokenFile(const std::string& path);
// Writes `token` there (0600, atomically).
absl::Status WriteBulkTokenFile(const std::string& path, absl::string_view token);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_TOKEN_H_
