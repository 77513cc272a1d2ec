// The hosts file (DeepSpeed / MPI hostfile syntax): one host a line, `HOST [slots=N]`,
// `#` starts a comment, blank lines are ignored.
//
//   # hosts.txt
//   gpu-node-1 slots=8
//   10.0.0.12  slots=4
//   gpu-node-3            # slots from the agent's own GPU count
//
// A duplicate host, a malformed line, an unknown option or a non-positive slot count is an
// error naming the file and the line.
#ifndef TUNEFLEET_LAUNCHER_HOSTS_FILE_H_
#define TUNEFLEET_LAUNCHER_HOSTS_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace launcher {

struct HostEntry {
  std::string host;  // name or address, optionally user@host
  int slots = 0;     // 0: not given (the agent reports its GPUs or --slots)
  int line = 0;      // 1-based line in the file (0: not from a file)
  // The GPUs its agent may use, by index among those the host shows it (the agent's
  // --gpu_ids), or may not (--exclude_gpu_ids); both empty: all (launcher/host_filter.h).
  std::vector<int> gpu_ids;
  std::vector<int> exclude_gpu_ids;
};

// "user@host" -> "host": the name its agent registers under.
std::string AgentNameOf(const std::string& host);

absl::StatusOr<std::vector<HostEntry>> LoadHostsFile(const std::string& path);
// Parses `text` as if it were the file `name`.
absl::StatusOr<std::vector<HostEntry>> ParseHostsFile(const std::string& text,
                                                      const std::string& name);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HOSTS_FILE_H_
