// head: owns the cluster. Reads the hosts file, starts or accepts one agent per host, tracks
// their heartbeats and free GPUs, places trials' ranks, and routes reports and decisions
// between hpo and the agents.
#include <iostream>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/logging.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {
namespace {

int Main(int argc, char** argv) {
  std::string nodes, bind = "tcp://127.0.0.1:5555", keys, start_agents = "ssh";
  std::string remote_shell = "ssh -o BatchMode=yes {host}";
  bool insecure = false;
  CommandLine cli("head", "",
                  "The tunefleet head node: accepts agents (one per host), places trials on\n"
                  "their GPUs and routes metrics and stop decisions between hpo and the trainers.");
  cli.AddString("nodes", &nodes, "hosts file, `HOST [slots=N]` a line (DeepSpeed / MPI syntax)",
                "hosts.txt");
  cli.AddString("bind", &bind, "address to listen on", "tcp://IP:PORT");
  cli.AddString("keys", &keys, "CURVE key folder from --gen_keys", "DIR");
  cli.AddString("start_agents", &start_agents,
                "ssh: start an agent on each host through --remote_shell; none: agents are "
                "started by hand or by a scheduler",
                "ssh|none");
  cli.AddString("remote_shell", &remote_shell, "command prefix that runs a command on {host}",
                "TEMPLATE");
  cli.AddBool("insecure", &insecure, "allow a non-loopback --bind without CURVE keys");
  cli.ExpectPositional(0, 0);
  absl::Status status = cli.Parse(std::vector<std::string>(argv + 1, argv + argc));
  if (cli.help_requested()) {
    std::cout << cli.Help();
    return kExitOk;
  }
  if (status.ok() && start_agents != "ssh" && start_agents != "none") {
    status = absl::InvalidArgumentError("--start_agents must be ssh or none, got '" + start_agents + "'");
  }
  if (status.ok() && remote_shell.find("{host}") == std::string::npos) {
    status = absl::InvalidArgumentError("--remote_shell must contain {host}");
  }
  if (!status.ok()) {
    PrintError("head", status);
    return kExitUsage;
  }
  if (!nodes.empty()) {
    auto hosts = LoadHostsFile(nodes);
    if (!hosts.ok()) {
      PrintError("head", hosts.status());
      return kExitUsage;
    }
    for (const HostEntry& h : *hosts) {
      TF_LOG(INFO) << "host " << h.host
                   << (h.slots > 0 ? " slots=" + std::to_string(h.slots) : std::string(" slots=auto"));
    }
  }
  PrintError("head", absl::UnavailableError("the control plane is not in this build yet"));
  return kExitFailure;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  tunefleet::ChdirToUserWorkingDirectory();
  tunefleet::SetLogRole("head");
  return tunefleet::launcher::Main(argc, argv);
}
