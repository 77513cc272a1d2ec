#include "launcher/head/head_options.h"

#include "absl/strings/str_cat.h"
#include "comm/endpoint.h"
#include "common/binary_path.h"
#include "common/runtime_dir.h"
#include "common/status_macros.h"
#include "launcher/backends/backend_registry.h"

namespace tunefleet {
namespace launcher {

void AddHeadFlags(CommandLine* cli, HeadFlags* f) {
  cli->AddString("nodes", &f->nodes,
                 "hosts file, `HOST [slots=N]` a line (DeepSpeed / MPI syntax); only agents whose "
                 "--name is listed are accepted (default: any agent)",
                 "hosts.txt");
  cli->AddString("bind", &f->bind,
                 "address to listen on (tcp://IP:PORT, tcp://IP:* or ipc://PATH; default: "
                 "ipc://RUNTIME/head/head.sock, in this user's private runtime folder, which "
                 "only this user reaches). TCP needs --keys, or --insecure",
                 "ENDPOINT");
  cli->AddString("keys", &f->keys,
                 "CURVE key folder from --gen_keys: encrypt the control plane and accept only the "
                 "client keys in DIR/authorized_keys (agents the head starts get --keys DIR too)",
                 "DIR");
  cli->AddString("gen_keys", &f->gen_keys,
                 "write a new key folder (server key pair, a client key pair for agents and hpo, "
                 "authorized_keys) and exit",
                 "DIR");
  std::string names;
  for (const std::string& name : BackendNames())
    absl::StrAppend(&names, names.empty() ? "" : "|", name);
  cli->AddString("start_agents", &f->start_agents, StartAgentsHelp(), names);
  cli->AddInt("slots", &f->slots,
              "ranks each host runs at once where the hosts file gives no slots=N" + SlotsNotes());
  cli->AddString("include", &f->include,
                 "DeepSpeed's filter: only these hosts, and of a host given with ids only those "
                 "GPUs (e.g. gpu1:0,1@gpu3)",
                 "HOST[:ID,...][@HOST...]");
  cli->AddString("exclude", &f->exclude,
                 "DeepSpeed's filter: all hosts but these, and of a host given with ids all its "
                 "GPUs but those (e.g. gpu2:3@gpu4)",
                 "HOST[:ID,...][@HOST...]");
  for (const BackendFlag& flag : AllBackendFlags()) {
    std::string& value = f->backend_flags.emplace(flag.name, flag.default_value).first->second;
    cli->AddString(flag.name, &value, flag.help, flag.value_name);
  }
  cli->AddBool("insecure", &f->insecure,
               "allow a tcp:// --bind without CURVE keys: anyone who reaches it (other users of "
               "this host included) can run commands as you");
  cli->AddString(
      "agent", &f->agent_binary,
      "agent binary on the hosts (default: the one beside this head, same path everywhere)",
      "PATH");
  cli->AddInt("agent_timeout_ms", &f->agent_timeout_ms,
              "how long a started agent may take to register before its host is reported silent");
  cli->AddString("log_dir", &f->log_dir,
                 "logs (the remote shells' output goes to LOG_DIR/agents; default: the head's "
                 "runtime folder)",
                 "DIR");
  cli->AddString("endpoint_file", &f->endpoint_file,
                 "after binding, write the bound endpoint and a newline to this file (atomically)",
                 "PATH");
  cli->AddInt("heartbeat_ms", &f->heartbeat_ms,
              "heartbeat interval; a peer silent for 3 intervals is lost", "MS");
}

absl::StatusOr<HeadOptions> HeadOptions::FromFlags(const HeadFlags& flags) {
  HeadOptions o;
  if (!flags.gen_keys.empty()) {
    o.gen_keys = flags.gen_keys;
    return o;
  }
  o.bind = flags.bind;
  o.log_dir = flags.log_dir;
  // The control plane is never anonymous: the default is a Unix socket in a 0700 folder of
  // this user's; TCP, even on loopback, takes other users' connections unless keys guard it.
  if (o.bind.empty() || o.log_dir.empty()) {
    ASSIGN_OR_RETURN(std::string runtime_dir, RuntimeSubdir("head"));
    if (o.bind.empty()) o.bind = absl::StrCat("ipc://", runtime_dir, "/head.sock");
    if (o.log_dir.empty()) o.log_dir = runtime_dir;
  }
  absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(o.bind, /*for_bind=*/true);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--bind: ", parsed.status().message()));
  }
  o.bind = parsed->text;
  if (!parsed->ipc && flags.keys.empty() && !flags.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bind ", o.bind,
        comm::IsLocalEndpoint(o.bind) ? " takes connections from every user of this host"
                                      : " is reachable from other hosts",
        ": give --keys DIR (see --gen_keys), leave --bind out (a private Unix socket), or "
        "--insecure"));
  }
  ASSIGN_OR_RETURN(o.backend, FindBackend(flags.start_agents));
  RETURN_IF_ERROR(o.backend->CheckFlags(BackendFlags{flags.nodes, o.bind}));
  if (flags.slots < 0 || flags.slots > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slots must be between 1 and 4096, got ", flags.slots));
  }
  for (const BackendFlag& flag : AllBackendFlags()) {
    const auto given = flags.backend_flags.find(flag.name);
    const std::string& value =
        given == flags.backend_flags.end() ? flag.default_value : given->second;
    if (flag.check != nullptr) RETURN_IF_ERROR(flag.check(value));
    o.backend_flags[flag.name] = value;
  }
  if (flags.heartbeat_ms < 1 || flags.heartbeat_ms > 3600 * 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--heartbeat_ms must be between 1 and 3600000, got ", flags.heartbeat_ms));
  }
  if (flags.agent_timeout_ms < 1)
    return absl::InvalidArgumentError("--agent_timeout_ms must be >= 1");
  o.agent_binary = flags.agent_binary;
  if (o.backend->starts_agents() && o.agent_binary.empty()) {
    ASSIGN_OR_RETURN(o.agent_binary, FindSiblingBinary("launcher/agent/agent"));
  }
  o.keys = flags.keys;
  o.insecure = flags.insecure;
  o.nodes = flags.nodes;
  o.include = flags.include;
  o.exclude = flags.exclude;
  o.slots = static_cast<int>(flags.slots);
  o.endpoint_file = flags.endpoint_file;
  o.heartbeat_interval = absl::Milliseconds(flags.heartbeat_ms);
  o.agent_timeout = absl::Milliseconds(flags.agent_timeout_ms);
  return o;
}

}  // namespace launcher
}  // namespace tunefleet
