#include "tests/trainer/commands/warm_worker_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tunefleet {
namespace trainer {
namespace {

std::string g_trainer;

}  // namespace

void SetTrainerPath(const std::string& path) { g_trainer = path; }

pid_t Spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
            const std::string& log) {
  std::vector<std::string> argv = {g_trainer};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  ::execv(raw[0], raw.data());
  _exit(127);
}

int WaitExit(FakeAgent& agent, pid_t pid, std::chrono::seconds timeout) {
  int status = 0;
  const bool exited =
      agent.PumpUntil([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace trainer
}  // namespace tunefleet
