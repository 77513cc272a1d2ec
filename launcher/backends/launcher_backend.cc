#include "launcher/backends/launcher_backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/shell_quote.h"

namespace tunefleet {
namespace launcher {

absl::Status LauncherBackend::CheckFlags(const BackendFlags&) const { return absl::OkStatus(); }

absl::StatusOr<BackendHosts> LauncherBackend::Hosts(const BackendFlags&) const {
  return absl::InvalidArgumentError(
      absl::StrCat("--start_agents ", name(), " has no hosts of its own: give --nodes hosts.txt"));
}

std::string BackendFlagValue(const LaunchSettings& settings, const std::string& name,
                             const std::string& default_value) {
  const auto it = settings.backend_flags.find(name);
  return it == settings.backend_flags.end() ? default_value : it->second;
}

std::string AgentHostArgs(const HostEntry& host) {
  std::string args;
  if (host.slots > 0) absl::StrAppend(&args, " --slots ", host.slots);
  if (!host.gpu_ids.empty())
    absl::StrAppend(&args, " --gpu_ids ", absl::StrJoin(host.gpu_ids, ","));
  if (!host.exclude_gpu_ids.empty()) {
    absl::StrAppend(&args, " --exclude_gpu_ids ", absl::StrJoin(host.exclude_gpu_ids, ","));
  }
  return args;
}

std::string AgentKeysArg(const LaunchSettings& settings) {
  return settings.keys_dir.empty() ? "" : absl::StrCat(" --keys ", ShellQuote(settings.keys_dir));
}

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

std::string EndedDetail(const std::string& what, const CommandEnd& end, const std::string& why) {
  return absl::StrCat(what, " ended (", end.exit_text, ") before an agent registered",
                      why.empty() ? "" : ": ", why);
}

}  // namespace launcher
}  // namespace tunefleet
