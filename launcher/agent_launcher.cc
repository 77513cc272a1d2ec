#include "launcher/agent_launcher.h"

#include <signal.h>
#include <sys/wait.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

std::string AgentNameOf(const std::string& host) {
  const size_t at = host.find('@');
  return at == std::string::npos ? host : host.substr(at + 1);
}

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789@%+=:,./_-") == std::string::npos) {
    return word;
  }
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

AgentLauncher::AgentLauncher(Options options, std::vector<HostEntry> hosts)
    : options_(std::move(options)), hosts_(std::move(hosts)) {
  for (const HostEntry& h : hosts_) status_.push_back({AgentNameOf(h.host), State::kStarting, ""});
  shells_.resize(hosts_.size());
}

AgentLauncher::~AgentLauncher() { Stop(); }

std::string AgentLauncher::CommandFor(const HostEntry& host) const {
  // exec: the shell becomes the remote shell (or the agent), so signals reach it directly.
  std::string command =
      absl::StrCat("exec ", absl::StrReplaceAll(options_.remote_shell, {{"{host}", host.host}}));
  absl::StrAppend(&command, " ", ShellQuote(options_.agent_binary), " --head ",
                  ShellQuote(options_.head_endpoint), " --name ", ShellQuote(AgentNameOf(host.host)),
                  " --detach");
  if (host.slots > 0) absl::StrAppend(&command, " --slots ", host.slots);
  if (!options_.keys_dir.empty()) absl::StrAppend(&command, " --keys ", ShellQuote(options_.keys_dir));
  return command;
}

void AgentLauncher::Start(absl::Time now) {
  started_ = now;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    ProcessSpec spec;
    spec.binary = "/bin/sh";
    spec.args = {"-c", CommandFor(hosts_[i])};
    spec.log_path = absl::StrCat(options_.log_dir, "/", status_[i].host, ".log");
    TF_LOG(INFO) << "host " << status_[i].host << ": starting its agent: " << spec.args[1];
    auto shell = ChildProcess::Start(spec);
    if (!shell.ok()) {
      Settle(i, State::kFailed, absl::StrCat("cannot run the remote shell: ", shell.status().message()));
      continue;
    }
    shells_[i] = std::move(*shell);
  }
}

void AgentLauncher::Settle(size_t i, State state, const std::string& detail) {
  HostStatus& s = status_[i];
  if (s.state != State::kStarting && !(s.state == State::kSilent && state != State::kSilent)) return;
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
  for (size_t i = 0; i < hosts_.size(); ++i) {
    ChildProcess* shell = shells_[i].get();
    if (shell != nullptr && !shell->exited()) {
      shell->DrainStderr();
      int wait_status = 0;
      if (::waitpid(shell->pid(), &wait_status, WNOHANG) == shell->pid()) {
        shell->SetExitStatus(wait_status);
        shell->DrainStderr();
      }
    }
    const HostStatus& s = status_[i];
    if (s.state == State::kUp || s.state == State::kFailed) continue;
    if (registered.contains(s.host)) {
      Settle(i, State::kUp, absl::StrCat("agent up (registered ",
                                         absl::FormatDuration(absl::Trunc(now - started_, absl::Milliseconds(100))),
                                         " after the start)"));
    } else if (shell != nullptr && shell->exited() && !shell->succeeded()) {
      // (Exit 0 before registering: the host's agent was running already, and registers by
      // itself; else it stays silent.)
      const std::string why = LastLine(shell->StderrTail());
      Settle(i, State::kFailed,
             absl::StrCat("the remote shell ended (", shell->DescribeExit(),
                          ") before an agent registered", why.empty() ? "" : ": ", why));
    } else if (s.state == State::kStarting && now - started_ >= options_.register_timeout) {
      Settle(i, State::kSilent,
             absl::StrCat("no agent registered within ",
                          absl::FormatDuration(options_.register_timeout),
                          " (its remote shell still runs; output in ", options_.log_dir, "/",
                          s.host, ".log)"));
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
  for (auto& shell : shells_) {
    if (shell != nullptr && !shell->exited()) shell->Signal(SIGTERM);
  }
}

}  // namespace launcher
}  // namespace tunefleet
