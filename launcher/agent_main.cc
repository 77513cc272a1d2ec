// agent: owns one node. Registers its GPUs (or CPU slots) with the head, starts a trainer
// process per assigned rank, relays their reports, delivers stop decisions, reports exits.
#include <iostream>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

int Main(int argc, char** argv) {
  std::string head, name, keys;
  int64_t slots = 0;
  CommandLine cli("agent", "",
                  "The tunefleet node agent: registers this machine's GPUs with the head and\n"
                  "runs the trainer ranks the head assigns to it.");
  cli.AddString("head", &head, "the head's address (required)", "tcp://HOST:PORT");
  cli.AddInt("slots", &slots, "ranks this node runs at once (default: its GPU count, or 1 without GPUs)");
  cli.AddString("name", &name, "name to register under (default: the host name)", "NAME");
  cli.AddString("keys", &keys, "CURVE key folder from head --gen_keys", "DIR");
  cli.ExpectPositional(0, 0);
  absl::Status status = cli.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (status.ok() && head.empty()) status = absl::InvalidArgumentError("--head is required");
  if (status.ok() && slots < 0) status = absl::InvalidArgumentError("--slots must be >= 0");
  if (!status.ok()) {
    PrintError("agent", status);
    return kExitUsage;
  }
  PrintError("agent", absl::UnavailableError("the control plane is not in this build yet"));
  return kExitFailure;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::ChdirToUserWorkingDirectory();
  tunefleet::SetLogRole("agent");
  return tunefleet::launcher::Main(argc, argv);
}
