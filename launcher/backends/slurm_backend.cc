#include "launcher/backends/slurm_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/shell_quote.h"
#include "common/status_macros.h"
#include "launcher/backends/slurm_allocation.h"

namespace tunefleet {
namespace launcher {

std::string SlurmBackend::slots_note() const {
  return "the allocation's GPUs per node otherwise: SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS, the gres";
}

std::string SlurmBackend::help() const {
  return "inside a Slurm allocation (salloc, sbatch), start one on each of its nodes "
         "(SLURM_JOB_NODELIST) as one srun job step that ends with the head";
}

absl::Status SlurmBackend::CheckFlags(const BackendFlags& flags) const {
  if (!flags.nodes.empty()) {
    return absl::InvalidArgumentError(
        "--nodes with --start_agents slurm: the hosts are the allocation's nodes "
        "(SLURM_JOB_NODELIST); pick some with --include or --exclude");
  }
  return absl::OkStatus();
}

absl::StatusOr<BackendHosts> SlurmBackend::Hosts(const BackendFlags& flags) const {
  ASSIGN_OR_RETURN(SlurmAllocation a, ReadSlurmAllocation());
  TF_LOG(INFO) << "slurm job " << a.job_id << ": " << a.nodes.size() << " node(s), "
               << (a.gpus_per_node > 0
                       ? absl::StrCat(a.gpus_per_node, " GPU(s) each (", a.gpus_source, ")")
                       : std::string("no GPU count in the environment"));
  BackendHosts out;
  out.source = "the Slurm allocation";
  for (const std::string& node : a.nodes) {
    HostEntry h;
    h.host = node;
    h.slots = a.gpus_per_node;
    out.hosts.push_back(std::move(h));
  }
  if (out.hosts.size() > 1 && flags.bind.rfind("ipc://", 0) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--start_agents slurm over ", out.hosts.size(),
        " nodes: agents on the other nodes cannot "
        "reach ",
        flags.bind, ": give --bind tcp://0.0.0.0:PORT with --keys DIR on a shared folder"));
  }
  return out;
}

std::string SlurmBackend::Command(const LaunchSettings& settings,
                                  const std::vector<HostEntry>& hosts) const {
  // The script each task runs: its node's own arguments, then the agent under its node name.
  std::string cases;
  for (const HostEntry& h : hosts) {
    const std::string args = AgentHostArgs(h);
    if (!args.empty())
      absl::StrAppend(&cases, ShellQuote(AgentNameOf(h.host)), ") set --", args, ";; ");
  }
  std::string script;
  if (!cases.empty()) script = absl::StrCat("case \"$SLURMD_NODENAME\" in ", cases, "esac; ");
  absl::StrAppend(&script, "exec ", ShellQuote(settings.agent_binary), " --head ",
                  ShellQuote(settings.head_endpoint), " --name \"$SLURMD_NODENAME\"",
                  AgentKeysArg(settings), " \"$@\"");
  std::vector<std::string> nodes;
  for (const HostEntry& h : hosts) nodes.push_back(AgentNameOf(h.host));
  return absl::StrCat(
      "exec ", ShellQuote(srun_), " --nodes=", hosts.size(), " --ntasks=", hosts.size(),
      " --ntasks-per-node=1 --overlap --nodelist=", ShellQuote(absl::StrJoin(nodes, ",")),
      " --kill-on-bad-exit=0 --wait=0 --job-name=tunefleet-agents --output=",
      ShellQuote(settings.log_dir + "/%N.log"), " /bin/sh -c ", ShellQuote(script), " agent");
}

std::vector<LaunchCommand> SlurmBackend::Plan(const LaunchSettings& settings,
                                              const std::vector<HostEntry>& hosts) const {
  if (hosts.empty()) return {};
  LaunchCommand c;
  c.shell_command = Command(settings, hosts);
  c.log_path = absl::StrCat(settings.log_dir, "/srun.log");
  for (size_t i = 0; i < hosts.size(); ++i) {
    c.hosts.push_back(i);
    c.host_logs.push_back(absl::StrCat(settings.log_dir, "/", AgentNameOf(hosts[i].host), ".log"));
  }
  c.start_line =
      absl::StrCat("starting the agents of ", hosts.size(), " host(s) as one Slurm job step");
  c.program = "srun";
  c.noun = "job step";
  return {std::move(c)};
}

std::optional<std::string> SlurmBackend::EndedBeforeRegistering(const LaunchCommand&,
                                                                const std::string&,
                                                                const std::string& host_log,
                                                                const CommandEnd& end) const {
  // A job step that ends has no agent left on any host, whatever its exit.
  std::string why = LastLine(FileTail(host_log, 4096));
  if (why.empty()) why = LastLine(end.output_tail);
  return EndedDetail("the Slurm job step of the agents", end, why);
}

const LauncherBackend& SlurmLauncherBackend() {
  static const auto* const kBackend = new SlurmBackend();
  return *kBackend;
}

}  // namespace launcher
}  // namespace tunefleet
