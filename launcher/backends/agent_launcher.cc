#include "launcher/backends/agent_launcher.h"

#include <signal.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {

AgentLauncher::AgentLauncher(const LauncherBackend& backend, LaunchSettings settings,
                             absl::Duration register_timeout, std::vector<HostEntry> hosts)
    : backend_(backend),
      settings_(std::move(settings)),
      register_timeout_(register_timeout),
      hosts_(std::move(hosts)) {
  for (const HostEntry& h : hosts_) status_.push_back({AgentNameOf(h.host), State::kStarting, ""});
  commands_ = backend_.Plan(settings_, hosts_);
  processes_.resize(commands_.size());
  command_of_.assign(hosts_.size(), commands_.size());
  slot_of_.assign(hosts_.size(), 0);
  for (size_t k = 0; k < commands_.size(); ++k) {
    for (size_t s = 0; s < commands_[k].hosts.size(); ++s) {
      command_of_[commands_[k].hosts[s]] = k;
      slot_of_[commands_[k].hosts[s]] = s;
    }
  }
}

AgentLauncher::~AgentLauncher() { Stop(); }

void AgentLauncher::Start(absl::Time now) {
  started_ = now;
  for (size_t k = 0; k < commands_.size(); ++k) {
    const LaunchCommand& c = commands_[k];
    ProcessSpec spec;
    spec.binary = "/bin/sh";
    spec.args = {"-c", c.shell_command};
    spec.log_path = c.log_path;
    TF_LOG(INFO) << c.start_line << ": " << c.shell_command;
    auto process = ChildProcess::Start(spec);
    if (!process.ok()) {
      for (size_t i : c.hosts) {
        Settle(i, State::kFailed,
               absl::StrCat("cannot run ", c.program, ": ", process.status().message()));
      }
      continue;
    }
    processes_[k] = std::move(*process);
  }
}

void AgentLauncher::Settle(size_t i, State state, const std::string& detail) {
  HostStatus& s = status_[i];
  if (s.state != State::kStarting && !(s.state == State::kSilent && state != State::kSilent))
    return;
  s.state = state;
  s.detail = detail;
  const std::string line = absl::StrCat("host ", s.host, ": ", detail);
  if (state == State::kUp) {
    TF_LOG(INFO) << line;
  } else {
    TF_LOG(ERROR) << line;
  }
}

void AgentLauncher::Poll(absl::Time now, const absl::flat_hash_set<std::string>& registered) {
  for (auto& process : processes_) {
    if (process == nullptr || process->exited()) continue;
    process->DrainStderr();
    if (process->Reap()) process->DrainStderr();
  }
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const HostStatus& s = status_[i];
    if (s.state == State::kUp || s.state == State::kFailed) continue;
    const bool planned = command_of_[i] < commands_.size();
    const ChildProcess* process = planned ? processes_[command_of_[i]].get() : nullptr;
    const std::string host_log = planned ? commands_[command_of_[i]].host_logs[slot_of_[i]] : "";
    if (registered.contains(s.host)) {
      Settle(
          i, State::kUp,
          absl::StrCat("agent up (registered ",
                       absl::FormatDuration(absl::Trunc(now - started_, absl::Milliseconds(100))),
                       " after the start)"));
      continue;
    }
    if (process != nullptr && process->exited()) {
      const CommandEnd end{process->succeeded(), process->DescribeExit(), process->StderrTail()};
      if (std::optional<std::string> failure =
              backend_.EndedBeforeRegistering(commands_[command_of_[i]], s.host, host_log, end)) {
        Settle(i, State::kFailed, *failure);
        continue;
      }
    }
    if (s.state == State::kStarting && planned && now - started_ >= register_timeout_) {
      Settle(i, State::kSilent,
             absl::StrCat("no agent registered within ", absl::FormatDuration(register_timeout_),
                          " (its ", commands_[command_of_[i]].noun, " still runs; output in ",
                          host_log, ")"));
    }
  }
  if (!summary_logged_ && AllSettled()) {
    summary_logged_ = true;
    int up = 0;
    for (const HostStatus& s : status_) up += s.state == State::kUp;
    if (up == static_cast<int>(status_.size())) {
      TF_LOG(INFO) << "agents: all " << up << " host(s) up";
    } else {
      TF_LOG(WARNING) << "agents: " << up << " of " << status_.size() << " host(s) up";
    }
  }
}

bool AgentLauncher::AllSettled() const {
  for (const HostStatus& s : status_) {
    if (s.state == State::kStarting) return false;
  }
  return true;
}

void AgentLauncher::Stop() {
  for (auto& process : processes_) {
    if (process != nullptr && !process->exited()) process->Signal(SIGTERM);
  }
}

}  // namespace launcher
}  // namespace tunefleet
