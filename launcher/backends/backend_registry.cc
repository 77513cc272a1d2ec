#include "launcher/backends/backend_registry.h"

#include <algorithm>
#include <utility>

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

std::vector<BackendFlag> AllBackendFlags() {
  std::vector<BackendFlag> flags;
  for (const LauncherBackend* backend : AllBackends()) {
    for (BackendFlag& flag : backend->flags()) {
      const bool seen = std::any_of(flags.begin(), flags.end(),
                                    [&](const BackendFlag& f) { return f.name == flag.name; });
      if (!seen) flags.push_back(std::move(flag));
    }
  }
  return flags;
}

std::string SlotsNotes() {
  std::vector<std::string> parts;
  for (const LauncherBackend* backend : AllBackends()) {
    const std::string note = backend->slots_note();
    if (!note.empty())
      parts.push_back(absl::StrCat("with --start_agents ", backend->name(), " ", note));
  }
  return parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, "; "), ")");
}

}  // namespace launcher
}  // namespace tunefleet
