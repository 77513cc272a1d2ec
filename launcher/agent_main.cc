// agent: owns one node. Registers its GPUs (or CPU slots) with the head, starts a trainer
// process per assigned rank, relays their reports, delivers stop decisions, reports exits.
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/curve_auth.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/logging.h"
#include "common/signals.h"
#include "launcher/agent.h"

namespace tunefleet {
namespace launcher {
namespace {

int Main(int argc, char** argv) {
  // Before any thread (ZeroMQ's included) so that every thread inherits the blocked mask.
  SignalFd signals({SIGCHLD, SIGINT, SIGTERM, SIGHUP});
  std::string head, name, keys, trainer, log_dir, address;
  int64_t slots = 0, kill_grace_ms = 5000;
  CommandLine cli("agent", "",
                  "The tunefleet node agent: registers this machine's GPUs with the head and\n"
                  "runs the trainer ranks the head assigns to it, one process per rank.");
  cli.AddString("head", &head, "the head's address (required)", "tcp://HOST:PORT");
  cli.AddInt("slots", &slots,
             "ranks this node runs at once: CPU slots where there is no GPU (default 1); with "
             "GPUs, at most this many of them (default all)");
  cli.AddString("name", &name, "name to register under (default: the host name)", "NAME");
  cli.AddString("address", &address,
                "address other nodes reach this one at, for MASTER_ADDR (default: the local "
                "address on the route to the head)", "IP");
  cli.AddString("keys", &keys, "CURVE key folder from head --gen_keys", "DIR");
  cli.AddString("trainer", &trainer, "trainer binary (default: the one built beside this agent)", "PATH");
  cli.AddString("log_dir", &log_dir, "rank logs (default /tmp/tunefleet-agent-NAME)", "DIR");
  cli.AddInt("kill_grace_ms", &kill_grace_ms, "time a stopped rank gets between SIGTERM and SIGKILL");
  cli.ExpectPositional(0, 0);
  absl::Status status = cli.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (status.ok() && head.empty()) status = absl::InvalidArgumentError("--head is required");
  if (status.ok() && slots < 0) status = absl::InvalidArgumentError("--slots must be >= 0");
  if (status.ok() && !keys.empty()) {
    auto loaded = comm::LoadClientKeys(keys);
    status = loaded.status();
  }
  if (status.ok() && trainer.empty()) {
    auto found = FindSiblingBinary("trainer/trainer");
    if (found.ok()) {
      trainer = *found;
    } else {
      status = found.status();
    }
  }
  if (!status.ok()) {
    PrintError("agent", status);
    return kExitUsage;
  }
  Agent::Options options;
  options.head = head;
  options.keys_dir = keys;
  options.name = name;
  options.address = address;
  options.slots = static_cast<int>(slots);
  options.trainer_binary = trainer;
  options.log_dir = log_dir;
  options.kill_grace = absl::Milliseconds(kill_grace_ms);
  Agent agent(options, &signals);
  absl::Status result = agent.Run();
  if (!result.ok()) {
    PrintError("agent", result);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::ChdirToUserWorkingDirectory();
  tunefleet::SetLogRole("agent");
  return tunefleet::launcher::Main(argc, argv);
}
