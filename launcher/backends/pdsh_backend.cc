#include "launcher/backends/pdsh_backend.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "common/shell_quote.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr int kFanOut = 1024;             // DeepSpeed's PDSH_MAX_FAN_OUT
constexpr size_t kOutputBytes = 1 << 16;  // of pdsh's log, read when it fails

}  // namespace

std::string PdshBackend::help() const {
  return "start the agents of --nodes' hosts at once through pdsh (as DeepSpeed does; "
         "PDSH_RCMD_TYPE, ssh by default)";
}

std::string PdshBackend::Command(const LaunchSettings& settings,
                                 const std::vector<HostEntry>& hosts) const {
  std::string rcmd = rcmd_;
  if (rcmd.empty()) {
    const char* env = std::getenv("PDSH_RCMD_TYPE");
    rcmd = env != nullptr && env[0] != 0 ? env : "ssh";
  }
  std::vector<std::string> targets;
  for (const HostEntry& h : hosts) targets.push_back(h.host);
  return absl::StrCat("PDSH_RCMD_TYPE=", ShellQuote(rcmd), " exec ", ShellQuote(pdsh_), " -S -f ",
                      kFanOut, " -w ", ShellQuote(absl::StrJoin(targets, ",")), " ",
                      ShellQuote(settings.agent_binary), " --head ",
                      ShellQuote(settings.head_endpoint), " --name %h --detach",
                      hosts.empty() ? "" : AgentHostArgs(hosts[0]), AgentKeysArg(settings));
}

std::vector<LaunchCommand> PdshBackend::Plan(const LaunchSettings& settings,
                                             const std::vector<HostEntry>& hosts) const {
  // One pdsh per distinct set of per-host agent arguments, in the order of their first host.
  std::vector<std::string> args_of_group;
  std::vector<std::vector<size_t>> group_hosts;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string args = AgentHostArgs(hosts[i]);
    size_t g = 0;
    while (g < args_of_group.size() && args_of_group[g] != args) ++g;
    if (g == args_of_group.size()) {
      args_of_group.push_back(args);
      group_hosts.emplace_back();
    }
    group_hosts[g].push_back(i);
  }
  std::vector<LaunchCommand> commands;
  for (size_t g = 0; g < group_hosts.size(); ++g) {
    std::vector<HostEntry> group;
    for (size_t i : group_hosts[g]) group.push_back(hosts[i]);
    LaunchCommand c;
    c.shell_command = Command(settings, group);
    c.log_path = absl::StrCat(settings.log_dir,
                              g == 0 ? "/pdsh.log" : absl::StrCat("/pdsh-", g + 1, ".log"));
    c.hosts = group_hosts[g];
    c.host_logs.assign(group.size(), c.log_path);
    c.start_line = absl::StrCat("starting the agents of ", group.size(), " host(s) through pdsh");
    c.program = "pdsh";
    c.noun = "pdsh";
    commands.push_back(std::move(c));
  }
  return commands;
}

std::optional<std::string> PdshBackend::EndedBeforeRegistering(const LaunchCommand& command,
                                                               const std::string& host,
                                                               const std::string&,
                                                               const CommandEnd& end) const {
  // Exit 0: every host's command did (an agent that detached, or found its host's running).
  if (end.succeeded) return std::nullopt;
  const std::string prefix = host + ": ";
  bool some_host_failed = false, this_host_failed = false;
  std::string why;
  for (absl::string_view line : absl::StrSplit(FileTail(command.log_path, kOutputBytes), '\n')) {
    if (absl::StartsWith(line, "pdsh@")) {
      // "pdsh@HEAD: H: CMD exited with exit code N": host H's command failed.
      const size_t colon = line.find(": ");
      if (colon == absl::string_view::npos || !absl::StrContains(line, " exited with exit code "))
        continue;
      some_host_failed = true;
      if (absl::StartsWith(line.substr(colon + 2), prefix)) this_host_failed = true;
    } else if (absl::StartsWith(line, prefix)) {
      why = std::string(line.substr(prefix.size()));
    }
  }
  // Another host's command failed, this one's exited 0: its agent registers by itself.
  if (some_host_failed && !this_host_failed) return std::nullopt;
  if (why.empty()) why = LastLine(end.output_tail);
  return EndedDetail("pdsh", end, why);
}

const LauncherBackend& PdshLauncherBackend() {
  static const auto* const kBackend = new PdshBackend();
  return *kBackend;
}

}  // namespace launcher
}  // namespace tunefleet
