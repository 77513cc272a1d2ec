#include "hpo/dev_cluster.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "comm/liveness.h"
#include "common/binary_path.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/runtime_dir.h"

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

// A fresh private folder PARENT/BASE, or BASE-2, BASE-3, ... when one of that name is left over
// (a killed hpo that had this pid, in another pid namespace sharing the folder).
absl::StatusOr<std::string> FreshPrivateDir(const std::string& parent, const std::string& base) {
  for (int i = 1; i <= 100; ++i) {
    const std::string dir =
        i == 1 ? JoinPath(parent, base) : absl::StrCat(parent, "/", base, "-", i);
    if (PathExists(dir)) continue;
    absl::Status made = PrivateDir(dir);
    if (!made.ok()) return made;
    return dir;
  }
  return absl::AlreadyExistsError(
      absl::StrCat("cannot make a fresh folder ", parent, "/", base, "[-N]: every name is taken"));
}

// Removes PARENT/dev-PID[-N] folders that killed sweeps left (kill -9 runs no clean-up): ours,
// real folders, their pid gone from this pid namespace, and their agent's lock free (so no
// live agent, of this namespace or another sharing the folder, still uses it). Returns how
// many it removed.
int RemoveStaleDevDirs(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return 0;
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind("dev-", 0) != 0) continue;
    const std::string digits = name.substr(4, name.find('-', 4) - 4);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const std::string path = JoinPath(parent, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    const int lock =
        ::open(JoinPath(path, "agent/agent.lock").c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    const bool free_lock = lock < 0 || ::flock(lock, LOCK_EX | LOCK_NB) == 0;
    if (lock >= 0) ::close(lock);
    if (free_lock) stale.push_back(path);
  }
  ::closedir(dir);
  int removed = 0;
  for (const std::string& path : stale) removed += RemoveTree(path).ok();
  return removed;
}

// Waits, up to kSocketWait, until the head's socket exists (or the head has ended): the agent
// and hpo then connect at their first try. Connecting before it exists, each waited for
// ZeroMQ's reconnect interval (100 ms); hpo registered 0.14-0.18 s after the head started.
void WaitForSocket(const std::string& path, ChildProcess& head) {
  constexpr absl::Duration kSocketWait = absl::Seconds(3);
  const absl::Time deadline = absl::Now() + kSocketWait;
  struct stat st;
  while (::stat(path.c_str(), &st) != 0 && absl::Now() < deadline && !head.Reap()) {
    absl::SleepFor(absl::Milliseconds(1));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<DevCluster>> DevCluster::Start(const Options& options) {
  auto head_binary = FindSiblingBinary("launcher/head/head");
  if (!head_binary.ok()) return head_binary.status();
  auto agent_binary = FindSiblingBinary("launcher/agent/agent");
  if (!agent_binary.ok()) return agent_binary.status();
  std::unique_ptr<DevCluster> cluster(new DevCluster());  // its destructor cleans up on errors
  cluster->options_ = options;
  absl::StatusOr<std::string> runtime = RuntimeDir();
  if (!runtime.ok()) return runtime.status();
  const std::string base = absl::StrCat("dev-", ::getpid());
  int stale = RemoveStaleDevDirs(*runtime);
  stale += RemoveStaleDevDirs(absl::StrCat("/tmp/tunefleet-", ::geteuid()));
  if (stale > 0) {
    TF_LOG(INFO) << "dev mode: removed " << stale << " runtime folder(s) that killed sweeps left";
  }
  absl::StatusOr<std::string> dir = FreshPrivateDir(*runtime, base);
  if (!dir.ok()) return dir.status();
  cluster->dir_ = *dir;
  cluster->socket_dir_ = *dir;
  if (JoinPath(*dir, "head.sock").size() >= sizeof(sockaddr_un::sun_path)) {
    // Too deep for a Unix socket: the socket alone goes to RuntimeDir()'s fallback root.
    const std::string short_root = absl::StrCat("/tmp/tunefleet-", ::geteuid());
    if (absl::Status s = PrivateDir(short_root); !s.ok()) return s;
    absl::StatusOr<std::string> socket_dir = FreshPrivateDir(short_root, base);
    if (!socket_dir.ok()) return socket_dir.status();
    cluster->socket_dir_ = *socket_dir;
  }
  cluster->endpoint_ = absl::StrCat("ipc://", JoinPath(cluster->socket_dir_, "head.sock"));
  const std::string heartbeat_ms = std::to_string(absl::ToInt64Milliseconds(options.heartbeat));
  const std::string head_grace_s =
      std::to_string(std::max<int64_t>(1, absl::ToInt64Seconds(options.agent_head_grace)));

  Member& head = cluster->head_;
  head.name = "head";
  head.log = options.log_dir + "/head.log";
  head.spec.binary = *head_binary;
  head.spec.args = {"--bind",         cluster->endpoint_, "--start_agents", "none",
                    "--heartbeat_ms", heartbeat_ms,       "--log_dir",      options.log_dir};
  head.spec.log_path = head.log;
  head.spec.stderr_to_log = true;

  Member& agent = cluster->agent_;
  agent.name = "agent";
  agent.log = options.log_dir + "/agent.log";
  agent.spec.binary = *agent_binary;
  agent.spec.args = {"--head",         cluster->endpoint_,
                     "--name",         "local",
                     "--slots",        std::to_string(options.slots),
                     "--runtime_dir",  JoinPath(cluster->dir_, "agent"),
                     "--log_dir",      options.log_dir,
                     "--head_grace_s", head_grace_s};
  if (options.prewarm_workers > 0) {
    agent.spec.args.push_back("--prewarm_workers");
    agent.spec.args.push_back(std::to_string(options.prewarm_workers));
  }
  if (options.prewarm_mps) agent.spec.args.push_back("--prewarm_mps");
  if (!options.allow_env.empty()) {
    agent.spec.args.push_back("--allow_env");
    agent.spec.args.push_back(absl::StrJoin(options.allow_env, ","));
  }
  if (!options.allow_dirs.empty()) {
    agent.spec.args.push_back("--allow_dir");
    agent.spec.args.push_back(absl::StrJoin(options.allow_dirs, ","));
  }
  agent.spec.log_path = agent.log;
  agent.spec.stderr_to_log = true;

  for (Member* m : {&head, &agent}) {
    auto process = ChildProcess::Start(m->spec);
    if (!process.ok()) return process.status();
    m->process = std::move(*process);
    m->started_at = absl::Now();
    if (m == &head) WaitForSocket(JoinPath(cluster->socket_dir_, "head.sock"), *m->process);
  }
  return cluster;
}

absl::Status DevCluster::Supervise(Member& m, absl::Time now) {
  if (m.process != nullptr) {
    if (!m.process->Reap()) return absl::OkStatus();  // running
    m.how = m.process->HowItEnded();
    m.process.reset();
    while (!m.deaths.empty() && now - m.deaths.front() > options_.restart_window)
      m.deaths.pop_front();
    m.deaths.push_back(now);
    const int restarts = static_cast<int>(m.deaths.size()) - 1;  // within the window, so far
    if (restarts >= options_.max_restarts) {
      const std::string loop = options_.max_restarts <= 0
                                   ? std::string()
                                   : absl::StrCat(" (", m.deaths.size(), " times within ",
                                                  absl::FormatDuration(options_.restart_window),
                                                  ": not restarting it again)");
      return absl::UnavailableError(absl::StrCat("the local ", m.name, " ", m.how, loop, "; ",
                                                 m.log, ": ", LastLines(m.log, 3)));
    }
    if (&m == &head_) {
      // A new head starts at least 2 s after the old one started: run ids come from the
      // microsecond clock at a head's start (launcher/head/head_main.cc), and the pause also keeps
      // a crash loop from spinning.
      m.restart_at = std::max(now, absl::FromUnixSeconds(absl::ToUnixSeconds(m.started_at) + 2));
    } else {
      // The head must have declared the old agent lost before the new one registers under
      // the same name, or it refuses the new one.
      m.restart_at = now + options_.heartbeat * (comm::kDefaultLiveness + 1);
    }
  }
  if (now < m.restart_at) return absl::OkStatus();
  auto process = ChildProcess::Start(m.spec);
  if (!process.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the local ", m.name, " ", m.how,
                     " and could not be restarted: ", process.status().message()));
  }
  m.process = std::move(*process);
  m.started_at = absl::Now();
  m.restart_at = absl::InfiniteFuture();
  if (options_.out != nullptr) {
    *options_.out << "dev mode: the local " << m.name << " " << m.how << "; restarted it "
                  << (&m == &head_ ? "on " : "with the head at ") << endpoint_ << " (restart "
                  << m.deaths.size() << " of at most " << options_.max_restarts << " within "
                  << absl::FormatDuration(options_.restart_window) << ")"
                  << (&m == &head_ ? ": the agent keeps its trials, hpo submits them again"
                                   : ": its running trials died with it and run again")
                  << std::endl;
  }
  return absl::OkStatus();
}

absl::Status DevCluster::CheckAlive() {
  if (stopped_) return absl::OkStatus();
  if (!failure_.ok()) return failure_;
  const absl::Time now = absl::Now();
  for (Member* m : {&head_, &agent_}) {
    failure_ = Supervise(*m, now);
    if (!failure_.ok()) return failure_;
  }
  return absl::OkStatus();
}

void DevCluster::Stop() {
  stopped_ = true;
  // Graceful, then hard (common/child_process.h): the agent first, so it stops its trainers.
  if (agent_.process != nullptr) agent_.process->Stop(absl::Seconds(10));
  if (head_.process != nullptr) head_.process->Stop(absl::Seconds(3));
  for (std::string* dir : {&socket_dir_, &dir_}) {
    if (dir->empty()) continue;
    (void)RemoveTree(*dir);  // best effort: the folder is private, and the next one is fresh
    dir->clear();
  }
}

DevCluster::~DevCluster() { Stop(); }

}  // namespace hpo
}  // namespace tunefleet
