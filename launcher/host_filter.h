// DeepSpeed's hostfile filters (`deepspeed --include ... / --exclude ...`) over the head's hosts:
// a filter is `HOST[:ID[,ID...]][@HOST[:ID...]...]`, e.g. `gpu1:0,1@gpu3`.
//   include: only the hosts named; of a host named with ids, only those GPUs;
//   exclude: all hosts but those named without ids; of a host named with ids, all GPUs but
//            those.
// GPU ids are indices among the GPUs the host's agent sees (CUDA_VISIBLE_DEVICES order, as
// DeepSpeed's local ranks). Where the host's slots are known (`slots=N`), ids are checked
// against them and an exclusion becomes the list of GPUs left (all of them excluded: the host
// goes); otherwise the agent applies it (--exclude_gpu_ids) and checks the ids itself.
// A host matches by its agent's name (a hosts-file entry's `user@` left out: '@' separates hosts).
// Errors (one line, naming the flag): both filters given, a host not among the hosts, a host named
// twice, a malformed id, an id at or past the host's slots, no host left. Thread-safety: stateless.
#ifndef TUNEFLEET_LAUNCHER_HOST_FILTER_H_
#define TUNEFLEET_LAUNCHER_HOST_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/gpu_detect.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

// `hosts` filtered by `include` or `exclude` ("" = no filter); `source` names where the hosts
// came from in errors ("hosts.txt", "the Slurm allocation").
absl::StatusOr<std::vector<HostEntry>> FilterHosts(std::vector<HostEntry> hosts,
                                                   const std::string& include,
                                                   const std::string& exclude,
                                                   const std::string& source);

// The agent's side: of the GPUs it sees, those `ids` name (in that order; empty: all), less
// those `excluded` names. An index past the GPUs seen is an error naming the flag.
absl::StatusOr<std::vector<GpuInfo>> SelectGpus(const std::vector<GpuInfo>& seen,
                                                const std::vector<int>& ids,
                                                const std::vector<int>& excluded);

// "0,1,3" -> {0, 1, 3}: GPU indices >= 0, no repeats. `what` names the flag in errors.
absl::StatusOr<std::vector<int>> ParseGpuIds(const std::string& text, const std::string& what);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HOST_FILTER_H_
