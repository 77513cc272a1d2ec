// agent: owns one node. Registers its GPUs (or CPU slots) with the head, starts a trainer
// process per assigned rank, relays their reports, delivers stop decisions, reports exits
// (launcher/agent/agent.h). The flags are agent_options.h's; what the process does with them is
// agent_startup.h's.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/cli.h"
#include "launcher/agent/agent_options.h"
#include "launcher/agent/agent_startup.h"

namespace tunefleet {
namespace launcher {
namespace {

int Main(int argc, char** argv) {
  AgentFlags flags;
  CommandLine cli("agent", "",
                  "The tunefleet node agent: registers this machine's GPUs with the head and\n"
                  "runs the trainer ranks the head assigns to it, one process per rank.");
  AddAgentFlags(&cli, &flags);
  cli.ExpectPositional(0, 0);
  if (const int exit_code =
          ParseOrExit(cli, std::vector<std::string>(argv + 1, argv + argc), "agent");
      exit_code >= 0) {
    return exit_code;
  }
  absl::StatusOr<AgentOptions> options = AgentOptions::FromFlags(flags);
  if (!options.ok()) {
    PrintError("agent", options.status());
    return kExitUsage;
  }
  return RunAgent(*std::move(options));
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain("agent", tunefleet::launcher::Main, argc, argv);
}
