#include "launcher/backends/ssh_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/shell_quote.h"

namespace tunefleet {
namespace launcher {

namespace {

constexpr char kRemoteShell[] = "remote_shell";
constexpr char kDefaultRemoteShell[] = "ssh -o BatchMode=yes {host}";

absl::Status CheckRemoteShell(const std::string& value) {
  if (value.find("{host}") == std::string::npos) {
    return absl::InvalidArgumentError("--remote_shell must contain {host}");
  }
  return absl::OkStatus();
}

}  // namespace

std::string SshBackend::help() const {
  return "start an agent on each host through --remote_shell";
}

std::vector<BackendFlag> SshBackend::flags() const {
  return {{kRemoteShell, kDefaultRemoteShell, "command prefix that runs a command on {host}",
           "TEMPLATE", CheckRemoteShell}};
}

std::string SshBackend::RemoteShell(const LaunchSettings& settings) {
  return BackendFlagValue(settings, kRemoteShell, kDefaultRemoteShell);
}

std::string SshBackend::CommandFor(const LaunchSettings& settings, const HostEntry& host) {
  // exec: the shell becomes the remote shell (or the agent), so signals reach it directly.
  return absl::StrCat(
      "exec ", absl::StrReplaceAll(RemoteShell(settings), {{"{host}", host.host}}), " ",
      ShellQuote(settings.agent_binary), " --head ", ShellQuote(settings.head_endpoint), " --name ",
      ShellQuote(AgentNameOf(host.host)), " --detach", AgentHostArgs(host), AgentKeysArg(settings));
}

std::vector<LaunchCommand> SshBackend::Plan(const LaunchSettings& settings,
                                            const std::vector<HostEntry>& hosts) const {
  std::vector<LaunchCommand> commands;
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string name = AgentNameOf(hosts[i].host);
    LaunchCommand c;
    c.shell_command = CommandFor(settings, hosts[i]);
    c.log_path = absl::StrCat(settings.log_dir, "/", name, ".log");
    c.hosts = {i};
    c.host_logs = {c.log_path};
    c.start_line = absl::StrCat("host ", name, ": starting its agent");
    c.program = "the remote shell";
    c.noun = "remote shell";
    commands.push_back(std::move(c));
  }
  return commands;
}

std::optional<std::string> SshBackend::EndedBeforeRegistering(const LaunchCommand&,
                                                              const std::string&,
                                                              const std::string&,
                                                              const CommandEnd& end) const {
  if (end.succeeded) return std::nullopt;
  return EndedDetail("the remote shell", end, LastLine(end.output_tail));
}

const LauncherBackend& SshLauncherBackend() {
  static const auto* const kBackend = new SshBackend();
  return *kBackend;
}

}  // namespace launcher
}  // namespace tunefleet
