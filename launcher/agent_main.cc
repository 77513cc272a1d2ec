// agent: owns one node. Registers its GPUs (or CPU slots) with the head, starts a trainer
// process per assigned rank, relays their reports, delivers stop decisions, reports exits.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/curve_auth.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/signals.h"
#include "launcher/agent.h"
#include "launcher/detach.h"

namespace tunefleet {
namespace launcher {
namespace {

std::string HostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

int Main(int argc, char** argv) {
  std::string head, name, keys, trainer, log_dir, address, cache_dir;
  int64_t slots = 0, kill_grace_ms = 5000, head_grace_s = 300;
  bool detach = false;
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
  cli.AddString("cache_dir", &cache_dir,
                "files the head stages for trials, by content hash (default LOG_DIR/cache)", "DIR");
  cli.AddInt("kill_grace_ms", &kill_grace_ms, "time a stopped rank gets between SIGTERM and SIGKILL");
  cli.AddInt("head_grace_s", &head_grace_s,
             "after losing the head, keep the runs going this long while registering again");
  cli.AddBool("detach", &detach,
              "run in the background (own session, output to LOG_DIR/agent.log) once registered; "
              "an agent of this name already running here is left alone (exit 0)");
  cli.ExpectPositional(0, 0);
  absl::Status status = cli.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (status.ok() && head.empty()) status = absl::InvalidArgumentError("--head is required");
  if (status.ok() && slots < 0) status = absl::InvalidArgumentError("--slots must be >= 0");
  if (status.ok() && head_grace_s < 0) status = absl::InvalidArgumentError("--head_grace_s must be >= 0");
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
  if (name.empty()) name = HostName();
  if (log_dir.empty()) log_dir = "/tmp/tunefleet-agent-" + name;
  if (absl::Status made = MakeDirs(log_dir); !made.ok()) {
    PrintError("agent", made);
    return kExitFailure;
  }
  // One agent per name on a host: a restarted head starting its agents again finds them.
  absl::StatusOr<int> lock = LockInstance(JoinPath(log_dir, "agent.lock"));
  if (!lock.ok()) {
    if (detach && lock.status().code() == absl::StatusCode::kAlreadyExists) {
      // Starting the node's agent is idempotent: the running one registers by itself.
      std::cout << "agent " << name << ": " << lock.status().message() << "; leaving it be"
                << std::endl;
      return kExitOk;
    }
    PrintError("agent", lock.status());
    return kExitFailure;
  }
  int ready_fd = -1;
  if (detach) {
    absl::StatusOr<Detached> detached = Detach(JoinPath(log_dir, "agent.log"), "agent " + name);
    if (!detached.ok()) {
      PrintError("agent", detached.status());
      return kExitFailure;
    }
    if (detached->parent) return detached->exit_code;
    ready_fd = detached->ready_fd;
    RecordLockOwner(*lock);
  }
  // Before any thread (ZeroMQ's included) so that every thread inherits the blocked mask.
  SignalFd signals({SIGCHLD, SIGINT, SIGTERM, SIGHUP});
  Agent::Options options;
  options.head = head;
  options.keys_dir = keys;
  options.name = name;
  options.address = address;
  options.slots = static_cast<int>(slots);
  options.trainer_binary = trainer;
  options.log_dir = log_dir;
  options.cache_dir = cache_dir;
  options.kill_grace = absl::Milliseconds(kill_grace_ms);
  options.head_grace = absl::Seconds(head_grace_s);
  options.on_registered = [&ready_fd] { ReportReady(&ready_fd); };
  Agent agent(options, &signals);
  absl::Status result = agent.Run();
  if (!result.ok()) {
    ReportFailure(&ready_fd, std::string(result.message()));
    PrintError("agent", result);
    return kExitFailure;
  }
  ReportFailure(&ready_fd, "stopped before it registered");
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
