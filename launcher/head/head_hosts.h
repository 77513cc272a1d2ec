// The hosts the head serves and what to call them: the hosts file of --nodes, else the hosts
// of a backend that has its own (--start_agents slurm: the allocation's nodes), else none (any
// agent is accepted); then DeepSpeed's --include / --exclude filters (launcher/host_filter.h),
// and --slots for each host whose entry gives neither slots nor GPU ids. Every error is a usage
// error (InvalidArgument or the hosts file's own) of one line.
//
// Thread-safety: a function of its options, the hosts file and the environment.
#ifndef TUNEFLEET_LAUNCHER_HEAD_HEAD_HOSTS_H_
#define TUNEFLEET_LAUNCHER_HEAD_HEAD_HOSTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/head/head_options.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {

struct HeadHosts {
  std::vector<HostEntry> hosts;
  std::string source;  // the hosts file's path, "the Slurm allocation", or "" for none
};

absl::StatusOr<HeadHosts> ResolveHeadHosts(const HeadOptions& options);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_HEAD_HEAD_HOSTS_H_
