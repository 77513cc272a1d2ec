#include "launcher/head/head_startup.h"

#include <unistd.h>

#include <iostream>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/curve_auth.h"
#include "comm/endpoint.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "launcher/backends/agent_launcher.h"
#include "launcher/head/head.h"
#include "launcher/head/head_hosts.h"

namespace tunefleet {
namespace launcher {
namespace {

int GenerateKeys(const std::string& dir) {
  const absl::Status status = comm::GenerateKeyFolder(dir);
  if (!status.ok()) {
    PrintError("head", status);
    // Naming a file or a folder that already holds keys is a usage error.
    return absl::IsInvalidArgument(status) || absl::IsAlreadyExists(status) ? kExitUsage
                                                                            : kExitFailure;
  }
  std::cout << "wrote " << dir << "/{server.key,server.pub,client.key,authorized_keys}: "
            << "start the head with --keys " << dir << ", agents and hpo with --keys DIR "
            << "holding server.pub and client.key\n";
  return kExitOk;
}

void LogHost(const HostEntry& h) {
  TF_LOG(INFO) << "host " << h.host
               << (h.slots > 0 ? " slots=" + std::to_string(h.slots) : std::string(" slots=auto"))
               << (h.gpu_ids.empty() ? "" : " gpus " + absl::StrJoin(h.gpu_ids, ","))
               << (h.exclude_gpu_ids.empty()
                       ? ""
                       : " without gpus " + absl::StrJoin(h.exclude_gpu_ids, ","));
}

// The agents of `hosts`, started through the backend; null when it starts none (then each
// host's command is logged for whoever starts it).
std::unique_ptr<AgentLauncher> StartAgents(const HeadOptions& options,
                                           const std::vector<HostEntry>& hosts,
                                           const std::string& endpoint) {
  if (options.backend->starts_agents() && !hosts.empty()) {
    LaunchSettings settings;
    settings.agent_binary = options.agent_binary;
    settings.head_endpoint = EndpointForAgents(endpoint);
    settings.log_dir = JoinPath(options.log_dir, "agents");
    settings.keys_dir = options.keys;
    settings.backend_flags = options.backend_flags;
    auto launcher = std::make_unique<AgentLauncher>(*options.backend, std::move(settings),
                                                    options.agent_timeout, hosts);
    launcher->Start(absl::Now());
    return launcher;
  }
  for (const HostEntry& h : hosts) {
    TF_LOG(INFO) << "waiting for an agent: agent --head " << EndpointForAgents(endpoint)
                 << " --name " << AgentNameOf(h.host)
                 << (h.gpu_ids.empty() ? "" : " --gpu_ids " + absl::StrJoin(h.gpu_ids, ","))
                 << (h.exclude_gpu_ids.empty()
                         ? ""
                         : " --exclude_gpu_ids " + absl::StrJoin(h.exclude_gpu_ids, ","));
  }
  return nullptr;
}

}  // namespace

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

int RunHead(const HeadOptions& options, SignalFd* signals) {
  if (!options.gen_keys.empty()) return GenerateKeys(options.gen_keys);
  absl::StatusOr<HeadHosts> hosts = ResolveHeadHosts(options);
  if (!hosts.ok()) {
    PrintError("head", hosts.status());
    return kExitUsage;
  }
  for (const HostEntry& h : hosts->hosts) LogHost(h);
  if (options.keys.empty() && options.bind.rfind("ipc://", 0) != 0) {
    TF_LOG(WARNING) << "--bind " << options.bind << " is reachable "
                    << (comm::IsLocalEndpoint(options.bind) ? "by every user of this host"
                                                            : "from other hosts")
                    << " without encryption or authentication (--insecure): anyone who can "
                    << "connect can run commands as this user on the agents";
  }
  Head::Options head_options;
  head_options.bind = options.bind;
  head_options.heartbeat_interval = options.heartbeat_interval;
  // Run ids no earlier head instance gave out: agents may still hold that one's runs.
  // (The microsecond clock: a head restarted within the same second still starts past every
  // id the one before gave out, unless that one gave out a million runs a second.)
  head_options.first_run_id = static_cast<uint64_t>(absl::ToUnixMicros(absl::Now()));
  head_options.hosts = hosts->hosts;
  head_options.hosts_file = hosts->source;
  head_options.keys_dir = options.keys;
  // Agents the head starts itself are followed from its poll loop.
  std::unique_ptr<AgentLauncher> launcher;
  Head* head_ptr = nullptr;
  head_options.on_tick = [&launcher, &head_ptr](absl::Time now) {
    if (launcher != nullptr && head_ptr != nullptr) launcher->Poll(now, head_ptr->LiveAgentNames());
  };
  Head head(head_options, signals);
  head_ptr = &head;
  absl::Status status = head.Bind();
  if (!status.ok()) {
    PrintError("head", status);
    return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  if (!options.endpoint_file.empty()) {
    status = WriteFileAtomically(options.endpoint_file, head.endpoint() + "\n");
    if (!status.ok()) {
      PrintError("head", status);
      return kExitFailure;
    }
  }
  launcher = StartAgents(options, hosts->hosts, head.endpoint());
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

}  // namespace launcher
}  // namespace tunefleet
