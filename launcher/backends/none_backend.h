// The none backend (head --start_agents none): the head starts no agent. Agents are started by
// hand or by a scheduler (`agent --head ENDPOINT --name HOST`); the head logs that command for
// each host of --nodes and waits for them.
//
// Thread-safety: immutable (launcher_backend.h).
#ifndef TUNEFLEET_LAUNCHER_BACKENDS_NONE_BACKEND_H_
#define TUNEFLEET_LAUNCHER_BACKENDS_NONE_BACKEND_H_

#include <optional>
#include <string>
#include <vector>

#include "launcher/backends/launcher_backend.h"

namespace tunefleet {
namespace launcher {

class NoneBackend : public LauncherBackend {
 public:
  std::string name() const override { return "none"; }
  std::string help() const override { return "agents are started by hand or by a scheduler"; }
  bool starts_agents() const override { return false; }
  // No command.
  std::vector<LaunchCommand> Plan(const LaunchSettings&,
                                  const std::vector<HostEntry>&) const override {
    return {};
  }
  std::optional<std::string> EndedBeforeRegistering(const LaunchCommand&, const std::string&,
                                                    const std::string&,
                                                    const CommandEnd&) const override {
    return std::nullopt;
  }
};

// The registry's instance (all_backends.cc).
const LauncherBackend& NoneLauncherBackend();

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_BACKENDS_NONE_BACKEND_H_
