// The `bulk` tool's subcommands (comm/bulk_main.cc): `serve` publishes paths by content hash
// over UCX until SIGINT/SIGTERM, `fetch` puts a hash into a verified cache, `hash` prints
// content hashes. Each takes its arguments after the subcommand and returns the exit code
// (common/cli.h: 0 ok, 2 usage, 1 failure), printing its own errors.
// Thread-compatible; BulkServe blocks SIGINT and SIGTERM (call it before any thread starts).
#ifndef TUNEFLEET_COMM_BULK_COMMANDS_H_
#define TUNEFLEET_COMM_BULK_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tunefleet {
namespace comm {

int BulkServe(const std::vector<std::string>& args);
int BulkFetch(const std::vector<std::string>& args);
int BulkHash(const std::vector<std::string>& args);

// `--bind`'s value: "IP", "IP:PORT", "[IPv6]" or "[IPv6]:PORT" -> ip, port (0 when absent).
// InvalidArgument naming --bind for anything else.
absl::Status SplitBind(const std::string& text, std::string* ip, int* port);

}  // namespace comm
}  // namespace tunefleet

#endif  // TUNEFLEET_COMM_BULK_COMMANDS_H_
