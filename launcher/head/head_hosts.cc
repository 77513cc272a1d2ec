#include "launcher/head/head_hosts.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "launcher/backends/backend_registry.h"
#include "launcher/host_filter.h"

namespace tunefleet {
namespace launcher {

absl::StatusOr<HeadHosts> ResolveHeadHosts(const HeadOptions& options) {
  HeadHosts out;
  out.source = options.nodes;
  if (!options.nodes.empty()) {
    ASSIGN_OR_RETURN(out.hosts, LoadHostsFile(options.nodes));
  } else if (options.backend->has_hosts()) {
    ASSIGN_OR_RETURN(BackendHosts own,
                     options.backend->Hosts(BackendFlags{options.nodes, options.bind}));
    out.hosts = std::move(own.hosts);
    out.source = std::move(own.source);
  }
  if (!options.include.empty() || !options.exclude.empty()) {
    if (out.hosts.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.include.empty() ? "--exclude" : "--include",
                       " filters hosts: give --nodes hosts.txt or ", BackendsWithHosts()));
    }
    ASSIGN_OR_RETURN(
        out.hosts, FilterHosts(std::move(out.hosts), options.include, options.exclude, out.source));
  }
  for (HostEntry& h : out.hosts) {
    if (h.slots == 0 && options.slots > 0 && h.gpu_ids.empty()) h.slots = options.slots;
  }
  return out;
}

}  // namespace launcher
}  // namespace tunefleet
