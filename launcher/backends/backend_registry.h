// The launcher backend registry's look-ups over AllBackends (all_backends.h): the head finds
// its --start_agents backend here, the backends' own flags and their parts of its help, and
// its flag's help and errors list the backends from here, without knowing any backend's name
// or flag itself.
//
// Thread-safety: pure functions over immutable backends.
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_BACKEND_REGISTRY_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_BACKEND_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

// The backend named `name`; an InvalidArgument "--start_agents must be ssh, slurm, none or
// pdsh, got 'NAME'" (the registered names, in order) if none.
absl::StatusOr<const LauncherBackend*> FindBackend(const std::string& name);
// The registered names, in registry order.
std::vector<std::string> BackendNames();
// --start_agents' help: "NAME: HELP; NAME: HELP; ..." over the backends.
std::string StartAgentsHelp();
// Where hosts come from besides --nodes, for an error: "--start_agents slurm" (each backend
// that has hosts of its own, joined with " or ").
std::string BackendsWithHosts();
// Every backend's own head flags (LauncherBackend::flags), in registry order, each name once.
std::vector<BackendFlag> AllBackendFlags();
// The backends' parts of --slots' help: " (with --start_agents NAME NOTE; ...)" over those
// with a slots_note, or "" when none has one.
std::string SlotsNotes();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_BACKEND_REGISTRY_H_
