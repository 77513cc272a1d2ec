#include "trainer/distributed/local_ranks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/exec_args.h"
#include "common/signals.h"


namespace tunefleet {
namespace trainer {
namespace {

// The last of SIGINT / SIGTERM / SIGHUP the parent got, and how many.
volatile sig_atomic_t g_signal = 0;
volatile sig_atomic_t g_signals = 0;

void OnSignal(int sig) {
  g_signal = sig;
  g_signals = g_signals + 1;
}

constexpr int kParentSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr std::chrono::milliseconds kPoll{50};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int wait_status = 0;
};

bool EndedBadly(int wait_status) {
  return !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0;
}

std::string DescribeEnd(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return absl::StrCat("was killed by signal ", sig, " (", strsignal(sig), ")");
  }
  return absl::StrCat("exited with exit code ", WEXITSTATUS(wait_status));
}

int ExitCodeOf(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return WEXITSTATUS(wait_status);
}

// Forks and execs rank `rank`; the child's environment is the parent's with `env` on top.
absl::StatusOr<pid_t> Spawn(const LocalRanksSpec& spec,
                            const std::map<std::string, std::string>& env) {
  const ExecArgs exec(spec.binary, spec.args, env);  // nothing is allocated after fork
  const std::string exec_failed = absl::StrCat("cannot run ", spec.binary, "\n");
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);  // the parent died between fork and prctl
    RestoreChildSignalMask();
    ::execve(exec.argv()[0], exec.argv(), exec.envp());
    ssize_t ignored = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    (void)ignored;
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that a signal sent right away reaches its group
  return pid;
}

// Reaps what has ended; the first rank that ended badly (one killed by a signal before one
// that exited, within one pass: the others usually exit because it is gone) into *culprit.
void Reap(std::vector<Rank>* ranks, int* culprit) {
  int found = -1;
  for (size_t i = 0; i < ranks->size(); ++i) {
    Rank& r = (*ranks)[i];
    if (!r.running) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) != r.pid) continue;
    r.running = false;
    r.wait_status = status;
    if (!EndedBadly(status)) continue;
    if (found < 0 || (WIFSIGNALED(status) && !WIFSIGNALED((*ranks)[found].wait_status))) {
      found = static_cast<int>(i);
    }
  }
  if (*culprit < 0) *culprit = found;
}

bool AnyRunning(const std::vector<Rank>& ranks) {
  for (const Rank& r : ranks) {
    if (r.running) return true;
  }
  return false;
}

// SIGTERM to every running rank's process group, SIGKILL after `grace` (or at a second signal
// to the parent); returns once every rank is reaped.
void EndAll(std::vector<Rank>* ranks, std::chrono::milliseconds grace) {
  const int signals_before = g_signals;
  for (const Rank& r : *ranks) {
    if (r.running) ::kill(-r.pid, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int ignored = -1;
  while (AnyRunning(*ranks) && std::chrono::steady_clock::now() < deadline &&
         g_signals == signals_before) {
    std::this_thread::sleep_for(kPoll);
    Reap(ranks, &ignored);
  }
  for (Rank& r : *ranks) {
    if (!r.running) continue;
    ::kill(-r.pid, SIGKILL);
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.running = false;
    r.wait_status = status;
  }
}

}  // namespace

std::vector<std::string> RankGpus(int ranks, const std::vector<int64_t>& gpu_ids,
                                  const std::vector<std::string>& visible) {
  std::vector<std::string> out;
  if (visible.empty()) return out;
  for (int i = 0; i < ranks; ++i) {
    const size_t index = gpu_ids.empty() ? static_cast<size_t>(i) : static_cast<size_t>(gpu_ids[i]);
    out.push_back(index < visible.size() ? visible[index] : std::to_string(index));
  }
  return out;
}

absl::StatusOr<int> FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int e = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("no free port on 127.0.0.1: ", std::strerror(e)));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

int RunLocalRanks(const LocalRanksSpec& spec, const std::string& program) {
  absl::StatusOr<int> port = FreeLoopbackPort();
  if (!port.ok()) {
    PrintError(program, port.status());
    return kExitFailure;
  }
  g_signal = 0;
  g_signals = 0;
  struct sigaction action = {}, old[3];
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kParentSignals[i], &action, &old[i]);

  const bool set_omp = spec.omp_threads > 0 && std::getenv("OMP_NUM_THREADS") == nullptr;
  std::vector<Rank> ranks(static_cast<size_t>(spec.ranks));
  absl::Status failed;
  for (int i = 0; i < spec.ranks && failed.ok(); ++i) {
    std::map<std::string, std::string> env = {
        {"RANK", std::to_string(i)},
        {"LOCAL_RANK", std::to_string(i)},
        {"WORLD_SIZE", std::to_string(spec.ranks)},
        {"LOCAL_WORLD_SIZE", std::to_string(spec.ranks)},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(*port)},
        {kLocalRanksEnv, "1"}};
    if (static_cast<size_t>(i) < spec.cuda_visible_devices.size()) {
      env["CUDA_VISIBLE_DEVICES"] = spec.cuda_visible_devices[i];
    }
    if (set_omp) env["OMP_NUM_THREADS"] = std::to_string(spec.omp_threads);
    absl::StatusOr<pid_t> pid = Spawn(spec, env);
    if (!pid.ok()) {
      failed = absl::Status(pid.status().code(),
                            absl::StrCat("starting rank ", i, ": ", pid.status().message()));
      break;
    }
    ranks[i].pid = *pid;
    ranks[i].running = true;
  }

  int culprit = -1;
  while (failed.ok() && g_signal == 0 && culprit < 0 && AnyRunning(ranks)) {
    std::this_thread::sleep_for(kPoll);
    Reap(&ranks, &culprit);
  }
  const int interrupted = g_signal;
  EndAll(&ranks, spec.grace);
  for (int i = 0; i < 3; ++i) ::sigaction(kParentSignals[i], &old[i], nullptr);

  if (!failed.ok()) {
    PrintError(program, failed);
    return kExitFailure;
  }
  if (interrupted != 0) {
    PrintError(program, absl::CancelledError(absl::StrCat(
                            "interrupted by signal ", interrupted, " (", strsignal(interrupted),
                            "): ended the ", spec.ranks, " ranks")));
    return 128 + interrupted;
  }
  if (culprit >= 0) {
    const int status = ranks[culprit].wait_status;
    PrintError(program,
               absl::InternalError(absl::StrCat("rank ", culprit, " (pid ", ranks[culprit].pid,
                                                ") ", DescribeEnd(status),
                                                spec.ranks > 1 ? "; ended the other ranks" : "")));
    return ExitCodeOf(status);
  }
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
