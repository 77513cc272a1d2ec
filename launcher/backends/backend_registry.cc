#include "launcher/backends/backend_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "launcher/backends/all_backends.h"

namespace tunefleet {
namespace launcher {

absl::StatusOr<const LauncherBackend*> FindBackend(const std::string& name) {
  for (const LauncherBackend* backend : AllBackends()) {
    if (backend->name() == name) return backend;
  }
  const std::vector<std::string> names = BackendNames();
  std::string choices = names.back();
  if (names.size() > 1) {
    choices =
        absl::StrCat(absl::StrJoin(names.begin(), names.end() - 1, ", "), " or ", names.back());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--start_agents must be ", choices, ", got '", name, "'"));
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const LauncherBackend* backend : AllBackends()) names.push_back(backend->name());
  return names;
}

std::string StartAgentsHelp() {
  std::vector<std::string> parts;
  for (const LauncherBackend* backend : AllBackends()) {
    parts.push_back(absl::StrCat(backend->name(), ": ", backend->help()));
  }
  return absl::StrJoin(parts, "; ");
}

std::string BackendsWithHosts() {
  std::vector<std::string> parts;
  for (const LauncherBackend* backend : AllBackends()) {
    if (backend->has_hosts()) parts.push_back(absl::StrCat("--start_agents ", backend->name()));
  }
  return absl::StrJoin(parts, " or ");
}

}  // namespace launcher
}  // namespace tunefleet
