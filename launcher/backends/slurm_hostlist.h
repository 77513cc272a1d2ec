// Slurm's host lists, as SLURM_JOB_NODELIST holds them, expanded as `scontrol show hostnames`
// expands them:
//   "node[01-04,07],gpu-a"  -> node01 node02 node03 node04 node07 gpu-a
//   "rack[1-2]-n[1-2]"      -> rack1-n1 rack1-n2 rack2-n1 rack2-n2   (the first range slowest)
//   "n[099-101]"            -> n099 n100 n101   (the width of a range's first number pads all)
// Hosts are separated by commas or spaces outside brackets; empty entries are skipped; a
// bracket holds comma-separated numbers and lo-hi ranges. Order and duplicates are kept.
// Malformed lists (an unclosed or stray bracket, a range that runs backwards, a bracket item
// that is not a number) are an InvalidArgument naming the list and the fault. Slurm refuses a
// suffix after a lone bracket ("n[1-2]x"); this accepts it.
// Thread-safety: stateless.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_SLURM_HOSTLIST_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_SLURM_HOSTLIST_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace launcher {

// At most this many hosts (a guard against "n[1-999999999]").
inline constexpr size_t kMaxExpandedHosts = 65536;

absl::StatusOr<std::vector<std::string>> ExpandHostList(const std::string& list);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_SLURM_HOSTLIST_H_
