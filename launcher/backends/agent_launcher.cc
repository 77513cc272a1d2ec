#include "launcher/backends/agent_launcher.h"

#include <signal.h>
#include <sys/wait.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
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
  const bool one_for_all = options_.method == Method::kSlurm;
  shells_.resize(one_for_all ? (hosts_.empty() ? 0 : 1) : hosts_.size());
  for (size_t i = 0; i < hosts_.size(); ++i) shell_of_.push_back(one_for_all ? 0 : i);
}

AgentLauncher::~AgentLauncher() { Stop(); }

std::string AgentLauncher::HostArgs(const HostEntry& host) {
  std::string args;
  if (host.slots > 0) absl::StrAppend(&args, " --slots ", host.slots);
  if (!host.gpu_ids.empty()) absl::StrAppend(&args, " --gpu_ids ", absl::StrJoin(host.gpu_ids, ","));
  if (!host.exclude_gpu_ids.empty()) {
    absl::StrAppend(&args, " --exclude_gpu_ids ", absl::StrJoin(host.exclude_gpu_ids, ","));
  }
  return args;
}

std::string AgentLauncher::CommandFor(const HostEntry& host) const {
  // exec: the shell becomes the remote shell (or the agent), so signals reach it directly.
  std::string command =
      absl::StrCat("exec ", absl::StrReplaceAll(options_.remote_shell, {{"{host}", host.host}}));
  absl::StrAppend(&command, " ", ShellQuote(options_.agent_binary), " --head ",
                  ShellQuote(options_.head_endpoint), " --name ", ShellQuote(AgentNameOf(host.host)),
                  " --detach", HostArgs(host));
  if (!options_.keys_dir.empty()) absl::StrAppend(&command, " --keys ", ShellQuote(options_.keys_dir));
  return command;
}

std::string AgentLauncher::SlurmCommand() const {
  // The script each task runs: its node's own arguments, then the agent under its node name.
  std::string cases;
  for (const HostEntry& h : hosts_) {
    const std::string args = HostArgs(h);
    if (!args.empty()) absl::StrAppend(&cases, ShellQuote(AgentNameOf(h.host)), ") set --", args, ";; ");
  }
  std::string script;
  if (!cases.empty()) script = absl::StrCat("case \"$SLURMD_NODENAME\" in ", cases, "esac; ");
  absl::StrAppend(&script, "exec ", ShellQuote(options_.agent_binary), " --head ",
                  ShellQuote(options_.head_endpoint), " --name \"$SLURMD_NODENAME\"");
  if (!options_.keys_dir.empty()) absl::StrAppend(&script, " --keys ", ShellQuote(options_.keys_dir));
  absl::StrAppend(&script, " \"$@\"");
  std::vector<std::string> nodes;
  for (const HostEntry& h : hosts_) nodes.push_back(AgentNameOf(h.host));
  return absl::StrCat("exec ", ShellQuote(options_.srun), " --nodes=", hosts_.size(), " --ntasks=",
                      hosts_.size(), " --ntasks-per-node=1 --overlap --nodelist=",
                      ShellQuote(absl::StrJoin(nodes, ",")),
                      " --kill-on-bad-exit=0 --wait=0 --job-name=tunefleet-agents --output=",
                      ShellQuote(options_.log_dir + "/%N.log"), " /bin/sh -c ", ShellQuote(script),
                      " agent");
}

std::string AgentLauncher::HostLog(size_t i) const {
  return absl::StrCat(options_.log_dir, "/", status_[i].host, ".log");
}

void AgentLauncher::Start(absl::Time now) {
  started_ = now;
  for (size_t k = 0; k < shells_.size(); ++k) {
    ProcessSpec spec;
    spec.binary = "/bin/sh";
    if (options_.method == Method::kSlurm) {
      spec.args = {"-c", SlurmCommand()};
      spec.log_path = absl::StrCat(options_.log_dir, "/srun.log");
      TF_LOG(INFO) << "starting the agents of " << hosts_.size()
                   << " host(s) as one Slurm job step: " << spec.args[1];
    } else {
      spec.args = {"-c", CommandFor(hosts_[k])};
      spec.log_path = HostLog(k);
      TF_LOG(INFO) << "host " << status_[k].host << ": starting its agent: " << spec.args[1];
    }
    auto shell = ChildProcess::Start(spec);
    if (!shell.ok()) {
      for (size_t i = 0; i < hosts_.size(); ++i) {
        if (shell_of_[i] != k) continue;
        Settle(i, State::kFailed, absl::StrCat("cannot run ",
                                               options_.method == Method::kSlurm ? "srun" : "the remote shell",
                                               ": ", shell.status().message()));
      }
      continue;
    }
    shells_[k] = std::move(*shell);
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
  for (auto& shell : shells_) {
    if (shell == nullptr || shell->exited()) continue;
    shell->DrainStderr();
    int wait_status = 0;
    if (::waitpid(shell->pid(), &wait_status, WNOHANG) == shell->pid()) {
      shell->SetExitStatus(wait_status);
      shell->DrainStderr();
    }
  }
  const bool slurm = options_.method == Method::kSlurm;
  for (size_t i = 0; i < hosts_.size(); ++i) {
    const ChildProcess* shell = shell_of_[i] < shells_.size() ? shells_[shell_of_[i]].get() : nullptr;
    const HostStatus& s = status_[i];
    if (s.state == State::kUp || s.state == State::kFailed) continue;
    if (registered.contains(s.host)) {
      Settle(i, State::kUp, absl::StrCat("agent up (registered ",
                                         absl::FormatDuration(absl::Trunc(now - started_, absl::Milliseconds(100))),
                                         " after the start)"));
    } else if (shell != nullptr && shell->exited() && (slurm || !shell->succeeded())) {
      // (A remote shell that exits 0 before its agent registers: the host's agent was running
      // already, and registers by itself; else it stays silent. A job step that ends has no
      // agent left on any host.)
      std::string why;
      if (slurm) why = LastLine(FileTail(HostLog(i), 4096));
      if (why.empty()) why = LastLine(shell->StderrTail());
      Settle(i, State::kFailed,
             absl::StrCat(slurm ? "the Slurm job step of the agents" : "the remote shell", " ended (",
                          shell->DescribeExit(), ") before an agent registered",
                          why.empty() ? "" : ": ", why));
    } else if (s.state == State::kStarting && now - started_ >= options_.register_timeout) {
      Settle(i, State::kSilent,
             absl::StrCat("no agent registered within ",
                          absl::FormatDuration(options_.register_timeout), " (its ",
                          slurm ? "job step" : "remote shell", " still runs; output in ",
                          HostLog(i), ")"));
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
