// head: owns the cluster. Reads the hosts file, starts or accepts one agent per host, tracks
// their heartbeats and free GPUs, places trials' ranks, and routes reports and decisions
// between hpo and the agents (launcher/head/head.h). The flags are head_options.h's; what the
// process does with them is head_startup.h's.
#include <csignal>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/cli.h"
#include "common/signals.h"
#include "launcher/head/head_options.h"
#include "launcher/head/head_startup.h"

namespace tunefleet {
namespace launcher {
namespace {

int Main(int argc, char** argv) {
  // First, before any thread exists (ZeroMQ's I/O threads inherit the blocked mask).
  SignalFd signals({SIGINT, SIGTERM});
  HeadFlags flags;
  CommandLine cli("head", "",
                  "The tunefleet head node: accepts agents (one per host), places trials on\n"
                  "their GPUs and routes metrics and stop decisions between hpo and the trainers.");
  AddHeadFlags(&cli, &flags);
  cli.ExpectPositional(0, 0);
  if (const int exit_code =
          ParseOrExit(cli, std::vector<std::string>(argv + 1, argv + argc), "head");
      exit_code >= 0) {
    return exit_code;
  }
  absl::StatusOr<HeadOptions> options = HeadOptions::FromFlags(flags);
  if (!options.ok()) {
    PrintError("head", options.status());
    return kExitUsage;
  }
  return RunHead(*options, &signals);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain("head", tunefleet::launcher::Main, argc, argv);
}
