// head: owns the cluster. Reads the hosts file, starts or accepts one agent per host, tracks
// their heartbeats and free GPUs, places trials' ranks, and routes reports and decisions
// between hpo and the agents (launcher/head/head.h).
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "comm/curve_auth.h"
#include "comm/endpoint.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/logging.h"
#include "common/runtime_dir.h"
#include "common/file_util.h"
#include "common/signals.h"
#include "common/status_macros.h"
#include "launcher/backends/agent_launcher.h"
#include "launcher/head/head.h"
#include "launcher/host_filter.h"
#include "launcher/hosts_file.h"
#include "launcher/backends/slurm_allocation.h"

namespace tunefleet {
namespace launcher {
namespace {

// The endpoint agents on other hosts would use: a wildcard address becomes this host's name.
std::string EndpointForAgents(const std::string& endpoint) {
  for (const char* wildcard : {"tcp://0.0.0.0:", "tcp://*:", "tcp://[::]:"}) {
    if (absl::StartsWith(endpoint, wildcard)) {
      char name[256] = {0};
      if (::gethostname(name, sizeof(name) - 1) != 0) return endpoint;
      return absl::StrCat("tcp://", name, ":", endpoint.substr(std::string(wildcard).size()));
    }
  }
  return endpoint;
}

// The hosts of the Slurm allocation this head runs in, each with the allocation's GPUs per
// node as its slots when the environment says.
absl::Status SlurmHosts(std::vector<HostEntry>* hosts) {
  ASSIGN_OR_RETURN(SlurmAllocation a, ReadSlurmAllocation());
  TF_LOG(INFO) << "slurm job " << a.job_id << ": " << a.nodes.size() << " node(s), "
               << (a.gpus_per_node > 0 ? absl::StrCat(a.gpus_per_node, " GPU(s) each (", a.gpus_source, ")")
                                       : std::string("no GPU count in the environment"));
  for (const std::string& node : a.nodes) {
    HostEntry h;
    h.host = node;
    h.slots = a.gpus_per_node;
    hosts->push_back(std::move(h));
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  // First, before any thread exists (ZeroMQ's I/O threads inherit the blocked mask).
  SignalFd signals({SIGINT, SIGTERM});

  std::string nodes, bind, keys, start_agents = "ssh";
  std::string remote_shell = "ssh -o BatchMode=yes {host}";
  std::string endpoint_file, agent_binary, log_dir, gen_keys, include, exclude;
  int64_t heartbeat_ms = 1000, agent_timeout_ms = 30000, slots = 0;
  bool insecure = false;
  CommandLine cli("head", "",
                  "The tunefleet head node: accepts agents (one per host), places trials on\n"
                  "their GPUs and routes metrics and stop decisions between hpo and the trainers.");
  cli.AddString("nodes", &nodes,
                "hosts file, `HOST [slots=N]` a line (DeepSpeed / MPI syntax); only agents whose "
                "--name is listed are accepted (default: any agent)",
                "hosts.txt");
  cli.AddString("bind", &bind,
                "address to listen on (tcp://IP:PORT, tcp://IP:* or ipc://PATH; default: "
                "ipc://RUNTIME/head/head.sock, in this user's private runtime folder, which "
                "only this user reaches). TCP needs --keys, or --insecure",
                "ENDPOINT");
  cli.AddString("keys", &keys,
                "CURVE key folder from --gen_keys: encrypt the control plane and accept only the "
                "client keys in DIR/authorized_keys (agents the head starts get --keys DIR too)",
                "DIR");
  cli.AddString("gen_keys", &gen_keys,
                "write a new key folder (server key pair, a client key pair for agents and hpo, "
                "authorized_keys) and exit",
                "DIR");
  cli.AddString("start_agents", &start_agents,
                "ssh: start an agent on each host through --remote_shell; slurm: inside a Slurm "
                "allocation (salloc, sbatch), start one on each of its nodes (SLURM_JOB_NODELIST) "
                "as one srun job step that ends with the head; none: agents are started by hand "
                "or by a scheduler",
                "ssh|slurm|none");
  cli.AddInt("slots", &slots,
             "ranks each host runs at once where the hosts file gives no slots=N (with "
             "--start_agents slurm the allocation's GPUs per node otherwise: "
             "SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS, the gres)");
  cli.AddString("include", &include,
                "DeepSpeed's filter: only these hosts, and of a host given with ids only those "
                "GPUs (e.g. gpu1:0,1@gpu3)", "HOST[:ID,...][@HOST...]");
  cli.AddString("exclude", &exclude,
                "DeepSpeed's filter: all hosts but these, and of a host given with ids all its "
                "GPUs but those (e.g. gpu2:3@gpu4)", "HOST[:ID,...][@HOST...]");
  cli.AddString("remote_shell", &remote_shell, "command prefix that runs a command on {host}",
                "TEMPLATE");
  cli.AddBool("insecure", &insecure,
              "allow a tcp:// --bind without CURVE keys: anyone who reaches it (other users of "
              "this host included) can run commands as you");
  cli.AddString("agent", &agent_binary,
                "agent binary on the hosts (default: the one beside this head, same path everywhere)",
                "PATH");
  cli.AddInt("agent_timeout_ms", &agent_timeout_ms,
             "how long a started agent may take to register before its host is reported silent");
  cli.AddString("log_dir", &log_dir,
                "logs (the remote shells' output goes to LOG_DIR/agents; default: the head's "
                "runtime folder)", "DIR");
  cli.AddString("endpoint_file", &endpoint_file,
                "after binding, write the bound endpoint and a newline to this file (atomically)",
                "PATH");
  cli.AddInt("heartbeat_ms", &heartbeat_ms,
             "heartbeat interval; a peer silent for 3 intervals is lost", "MS");
  cli.ExpectPositional(0, 0);
  if (const int exit_code =
          ParseOrExit(cli, std::vector<std::string>(argv + 1, argv + argc), "head");
      exit_code >= 0) {
    return exit_code;
  }
  absl::Status status;
  if (status.ok() && !gen_keys.empty()) {
    status = comm::GenerateKeyFolder(gen_keys);
    if (!status.ok()) {
      PrintError("head", status);
      // Naming a file or a folder that already holds keys is a usage error.
      return absl::IsInvalidArgument(status) || absl::IsAlreadyExists(status) ? kExitUsage
                                                                              : kExitFailure;
    }
    std::cout << "wrote " << gen_keys << "/{server.key,server.pub,client.key,authorized_keys}: "
              << "start the head with --keys " << gen_keys << ", agents and hpo with --keys DIR "
              << "holding server.pub and client.key\n";
    return kExitOk;
  }
  // The control plane is never anonymous: the default is a Unix socket in a 0700 folder of
  // this user's; TCP, even on loopback, takes other users' connections unless keys guard it.
  std::string runtime_dir;
  if (status.ok() && (bind.empty() || log_dir.empty())) {
    status = AssignOrStatus(RuntimeSubdir("head"), &runtime_dir);
  }
  if (status.ok() && bind.empty()) bind = absl::StrCat("ipc://", runtime_dir, "/head.sock");
  if (status.ok() && log_dir.empty()) log_dir = runtime_dir;
  if (status.ok()) {
    absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(bind, /*for_bind=*/true);
    if (!parsed.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat("--bind: ", parsed.status().message()));
    } else {
      bind = parsed->text;
      if (!parsed->ipc && keys.empty() && !insecure) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "--bind ", bind, comm::IsLocalEndpoint(bind) ? " takes connections from every user of this host"
                                                        : " is reachable from other hosts",
            ": give --keys DIR (see --gen_keys), leave --bind out (a private Unix socket), or "
            "--insecure"));
      }
    }
  }
  if (status.ok() && start_agents != "ssh" && start_agents != "slurm" && start_agents != "none") {
    status = absl::InvalidArgumentError("--start_agents must be ssh, slurm or none, got '" +
                                        start_agents + "'");
  }
  if (status.ok() && start_agents == "slurm" && !nodes.empty()) {
    status = absl::InvalidArgumentError(
        "--nodes with --start_agents slurm: the hosts are the allocation's nodes "
        "(SLURM_JOB_NODELIST); pick some with --include or --exclude");
  }
  if (status.ok() && (slots < 0 || slots > 4096)) {
    status = absl::InvalidArgumentError(absl::StrCat("--slots must be between 1 and 4096, got ", slots));
  }
  if (status.ok() && remote_shell.find("{host}") == std::string::npos) {
    status = absl::InvalidArgumentError("--remote_shell must contain {host}");
  }
  if (status.ok() && (heartbeat_ms < 1 || heartbeat_ms > 3600 * 1000)) {
    status = absl::InvalidArgumentError(
        absl::StrCat("--heartbeat_ms must be between 1 and 3600000, got ", heartbeat_ms));
  }
  if (status.ok() && agent_timeout_ms < 1) status = absl::InvalidArgumentError("--agent_timeout_ms must be >= 1");
  if (status.ok() && start_agents != "none" && agent_binary.empty()) {
    status = AssignOrStatus(FindSiblingBinary("launcher/agent/agent"), &agent_binary);
  }
  if (!status.ok()) {
    PrintError("head", status);
    return kExitUsage;
  }

  Head::Options options;
  options.bind = bind;
  options.heartbeat_interval = absl::Milliseconds(heartbeat_ms);
  // Run ids no earlier head instance gave out: agents may still hold that one's runs.
  // (The microsecond clock: a head restarted within the same second still starts past every
  // id the one before gave out, unless that one gave out a million runs a second.)
  options.first_run_id = static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
  std::string hosts_source = nodes;
  std::vector<HostEntry> hosts;
  if (!nodes.empty()) {
    status = AssignOrStatus(LoadHostsFile(nodes), &hosts);
  } else if (start_agents == "slurm") {
    status = SlurmHosts(&hosts);
    hosts_source = "the Slurm allocation";
    if (status.ok() && hosts.size() > 1 && bind.rfind("ipc://", 0) == 0) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "--start_agents slurm over ", hosts.size(), " nodes: agents on the other nodes cannot "
          "reach ", bind, ": give --bind tcp://0.0.0.0:PORT with --keys DIR on a shared folder"));
    }
  }
  if (status.ok() && (!include.empty() || !exclude.empty())) {
    if (hosts.empty()) {
      status = absl::InvalidArgumentError(absl::StrCat(
          include.empty() ? "--exclude" : "--include",
          " filters hosts: give --nodes hosts.txt or --start_agents slurm"));
    } else {
      status = AssignOrStatus(FilterHosts(std::move(hosts), include, exclude, hosts_source), &hosts);
    }
  }
  if (!status.ok()) {
    PrintError("head", status);
    return kExitUsage;
  }
  for (HostEntry& h : hosts) {
    if (h.slots == 0 && slots > 0 && h.gpu_ids.empty()) h.slots = static_cast<int>(slots);
    TF_LOG(INFO) << "host " << h.host
                 << (h.slots > 0 ? " slots=" + std::to_string(h.slots) : std::string(" slots=auto"))
                 << (h.gpu_ids.empty() ? "" : " gpus " + absl::StrJoin(h.gpu_ids, ","))
                 << (h.exclude_gpu_ids.empty() ? "" : " without gpus " + absl::StrJoin(h.exclude_gpu_ids, ","));
  }
  options.hosts = std::move(hosts);
  options.hosts_file = hosts_source;
  options.keys_dir = keys;
  if (keys.empty() && bind.rfind("ipc://", 0) != 0) {
    TF_LOG(WARNING) << "--bind " << bind << " is reachable "
                    << (comm::IsLocalEndpoint(bind) ? "by every user of this host" : "from other hosts")
                    << " without encryption or authentication (--insecure): anyone who can "
                    << "connect can run commands as this user on the agents";
  }

  // Agents the head starts itself are followed from its poll loop.
  std::unique_ptr<AgentLauncher> launcher;
  Head* head_ptr = nullptr;
  options.on_tick = [&launcher, &head_ptr](absl::Time now) {
    if (launcher != nullptr && head_ptr != nullptr) launcher->Poll(now, head_ptr->LiveAgentNames());
  };
  Head head(options, &signals);
  head_ptr = &head;
  status = head.Bind();
  if (!status.ok()) {
    PrintError("head", status);
    return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (!endpoint_file.empty()) {
    status = WriteFileAtomically(endpoint_file, head.endpoint() + "\n");
    if (!status.ok()) {
      PrintError("head", status);
      return kExitFailure;
    }
  }
  if (start_agents != "none" && !options.hosts.empty()) {
    AgentLauncher::Options lo;
    lo.method = start_agents == "slurm" ? AgentLauncher::Method::kSlurm
                                        : AgentLauncher::Method::kRemoteShell;
    lo.remote_shell = remote_shell;
    lo.agent_binary = agent_binary;
    lo.head_endpoint = EndpointForAgents(head.endpoint());
    lo.log_dir = JoinPath(log_dir, "agents");
    lo.register_timeout = absl::Milliseconds(agent_timeout_ms);
    lo.keys_dir = keys;
    launcher = std::make_unique<AgentLauncher>(std::move(lo), options.hosts);
    launcher->Start(absl::Now());
  } else if (!options.hosts.empty()) {
    for (const HostEntry& h : options.hosts) {
      TF_LOG(INFO) << "waiting for an agent: agent --head " << EndpointForAgents(head.endpoint())
                   << " --name " << AgentNameOf(h.host)
                   << (h.gpu_ids.empty() ? "" : " --gpu_ids " + absl::StrJoin(h.gpu_ids, ","))
                   << (h.exclude_gpu_ids.empty()
                           ? ""
                           : " --exclude_gpu_ids " + absl::StrJoin(h.exclude_gpu_ids, ","));
    }
  }
  status = head.Run();
  if (launcher != nullptr) launcher->Stop();
  // ZeroMQ leaves an ipc:// socket's file behind: a clean exit removes it (a killed head's
  // is taken over by the next one, comm::PrepareIpcBind).
  if (head.endpoint().rfind("ipc://", 0) == 0) ::unlink(head.endpoint().substr(6).c_str());
  if (!status.ok()) {
    PrintError("head", status);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain("head", tunefleet::launcher::Main, argc, argv);
}
