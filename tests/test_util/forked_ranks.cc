#include "tests/test_util/forked_ranks.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace tunefleet {
namespace {

// A port nobody listens on now (the kernel's pick for an ephemeral bind).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

[[noreturn]] void RunRank(int rank, int world, int port,
                          const std::function<int(comm::ProcessGroup&)>& body,
                          std::chrono::seconds timeout) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  comm::DistEnv env;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.local_world_size = world;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  int code = kFailedToJoin;
  {
    auto group = comm::ProcessGroup::Connect(env, comm::ProcessGroup::Backend::kGloo, timeout);
    if (!group.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", rank, std::string(group.status().message()).c_str());
    } else {
      code = body(**group);
    }
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

}  // namespace

std::vector<int> RunForkedRanks(int world, const std::function<int(comm::ProcessGroup&)>& body,
                                std::chrono::seconds timeout) {
  const int port = FreePort();
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) RunRank(r, world, port, body, timeout);
    pids.push_back(pid);
  }
  std::vector<int> codes(world, -1);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int left = world;
  while (left > 0) {
    for (int r = 0; r < world; ++r) {
      if (codes[r] != -1 || pids[r] <= 0) {
        if (pids[r] <= 0 && codes[r] == -1) codes[r] = kFailedToJoin, --left;
        continue;
      }
      int status = 0;
      if (waitpid(pids[r], &status, WNOHANG) == pids[r]) {
        codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < world; ++r) {
        if (codes[r] != -1) continue;
        kill(pids[r], SIGKILL);
        waitpid(pids[r], nullptr, 0);
        codes[r] = kTimedOut;
        std::fprintf(stderr, "rank %d: killed after %lld s\n", r,
                     static_cast<long long>(timeout.count()));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return codes;
}

}  // namespace tunefleet
