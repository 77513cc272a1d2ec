#include "hpo/dev_cluster.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/binary_path.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string LastLines(const std::string& path, size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
    if (lines.size() > n) lines.erase(lines.begin());
  }
  return absl::StrJoin(lines, " | ");
}

bool Reap(launcher::ChildProcess* child) {
  if (child == nullptr || child->exited()) return true;
  int status = 0;
  if (::waitpid(child->pid(), &status, WNOHANG) == child->pid()) {
    child->SetExitStatus(status);
    return true;
  }
  return false;
}

void StopChild(launcher::ChildProcess* child, absl::Duration grace) {
  if (child == nullptr || Reap(child)) return;
  child->Signal(SIGTERM);
  const absl::Time deadline = absl::Now() + grace;
  while (absl::Now() < deadline) {
    if (Reap(child)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  child->Signal(SIGKILL);
  int status = 0;
  if (::waitpid(child->pid(), &status, 0) == child->pid()) child->SetExitStatus(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DevCluster>> DevCluster::Start(const Options& options) {
  auto head_binary = FindSiblingBinary("launcher/head");
  if (!head_binary.ok()) return head_binary.status();
  auto agent_binary = FindSiblingBinary("launcher/agent");
  if (!agent_binary.ok()) return agent_binary.status();
  std::unique_ptr<DevCluster> cluster(new DevCluster());
  char dir[] = "/tmp/tunefleet-dev-XXXXXX";
  if (::mkdtemp(dir) == nullptr) return absl::InternalError("cannot create a temporary folder in /tmp");
  cluster->dir_ = dir;
  cluster->endpoint_ = absl::StrCat("ipc://", cluster->dir_, "/head.sock");
  cluster->head_log_ = options.log_dir + "/head.log";
  cluster->agent_log_ = options.log_dir + "/agent.log";
  const std::string heartbeat_ms = std::to_string(absl::ToInt64Milliseconds(options.heartbeat));

  launcher::ProcessSpec head;
  head.binary = *head_binary;
  head.args = {"--bind", cluster->endpoint_, "--start_agents", "none", "--heartbeat_ms", heartbeat_ms};
  head.log_path = cluster->head_log_;
  head.stderr_to_log = true;
  auto head_process = launcher::ChildProcess::Start(head);
  if (!head_process.ok()) return head_process.status();
  cluster->head_ = std::move(*head_process);

  launcher::ProcessSpec agent;
  agent.binary = *agent_binary;
  agent.args = {"--head", cluster->endpoint_, "--name", "local", "--slots", std::to_string(options.slots),
                "--log_dir", options.log_dir};
  agent.log_path = cluster->agent_log_;
  agent.stderr_to_log = true;
  auto agent_process = launcher::ChildProcess::Start(agent);
  if (!agent_process.ok()) return agent_process.status();
  cluster->agent_ = std::move(*agent_process);
  return cluster;
}

absl::Status DevCluster::CheckAlive() {
  for (auto [child, name, log] : {std::tuple{head_.get(), "head", &head_log_},
                                  std::tuple{agent_.get(), "agent", &agent_log_}}) {
    if (child != nullptr && Reap(child)) {
      return absl::UnavailableError(absl::StrCat("the local ", name, " ", child->DescribeExit(),
                                                 "; ", *log, ": ", LastLines(*log, 3)));
    }
  }
  return absl::OkStatus();
}

void DevCluster::Stop() {
  StopChild(agent_.get(), absl::Seconds(10));
  StopChild(head_.get(), absl::Seconds(3));
  if (!dir_.empty()) {
    ::unlink((dir_ + "/head.sock").c_str());
    ::rmdir(dir_.c_str());
    dir_.clear();
  }
}

DevCluster::~DevCluster() { Stop(); }

}  // namespace hpo
}  // namespace tunefleet
