#include "launcher/agent/agent_startup.h"

#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include "common/cli.h"
#include "common/file_util.h"
#include "common/runtime_dir.h"
#include "common/signals.h"
#include "common/status_macros.h"
#include "launcher/agent/agent.h"
#include "launcher/agent/detach.h"

namespace tunefleet {
namespace launcher {
namespace {

Agent::Options ForAgent(const AgentOptions& o) {
  Agent::Options options;
  options.head = o.head;
  options.keys_dir = o.keys;
  options.name = o.name;
  options.address = o.address;
  options.slots = o.slots;
  options.gpu_ids = o.gpu_ids;
  options.exclude_gpu_ids = o.exclude_gpu_ids;
  options.trainer_binary = o.trainer;
  options.runtime_dir = o.runtime_dir;
  options.log_dir = o.log_dir;
  options.cache_dir = o.cache_dir;
  options.allow_dirs = o.allow_dirs;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) != nullptr) options.allow_dirs.push_back(cwd);
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/' && home[1] != 0) {
    options.allow_dirs.push_back(home);
  }
  options.allow_env = o.allow_env;
  options.kill_grace = o.kill_grace;
  options.head_grace = o.head_grace;
  options.mps = o.mps;
  options.programs = o.programs;
  options.prewarm_workers = o.prewarm_workers;
  options.prewarm_mps = o.prewarm_mps;
  return options;
}

}  // namespace

int RunAgent(AgentOptions options) {
  if (options.runtime_dir.empty()) {
    absl::Status made =
        AssignOrStatus(RuntimeSubdir("agent-" + options.name), &options.runtime_dir);
    if (!made.ok()) {
      PrintError("agent", made);
      return kExitFailure;
    }
  }
  if (!options.log_dir.empty()) {
    if (absl::Status made = MakeDirs(options.log_dir); !made.ok()) {
      PrintError("agent", made);
      return kExitFailure;
    }
  }
  // One agent per name on a host: a restarted head starting its agents again finds them.
  const std::string lock_path = JoinPath(options.runtime_dir, "agent.lock");
  absl::StatusOr<int> lock = LockInstance(lock_path);
  if (!lock.ok()) {
    if (options.detach && lock.status().code() == absl::StatusCode::kAlreadyExists) {
      // Starting the node's agent is idempotent: the running one registers by itself.
      std::cout << "agent " << options.name << ": " << lock.status().message() << "; leaving it be"
                << std::endl;
      return kExitOk;
    }
    PrintError("agent", lock.status());
    return kExitFailure;
  }
  int ready_fd = -1;
  if (options.detach) {
    absl::StatusOr<Detached> detached =
        Detach(JoinPath(options.runtime_dir, "agent.log"), "agent " + options.name);
    if (!detached.ok()) {
      PrintError("agent", detached.status());
      return kExitFailure;
    }
    if (detached->parent) return detached->exit_code;
    ready_fd = detached->ready_fd;
    RecordLockOwner(*lock);
  }
  // Before any thread (ZeroMQ's included) so that every thread inherits the blocked mask.
  SignalFd signals({SIGCHLD, SIGINT, SIGTERM, SIGHUP});
  Agent::Options agent_options = ForAgent(options);
  agent_options.on_registered = [&ready_fd] { ReportReady(&ready_fd); };
  absl::Status result;
  {
    Agent agent(std::move(agent_options), &signals);
    result = agent.Run();
  }
  // A clean exit leaves nothing behind (a killed agent's files are taken over by the next).
  ::unlink(JoinPath(options.runtime_dir, "trainers.sock").c_str());
  ::unlink(lock_path.c_str());
  if (!result.ok()) {
    ReportFailure(&ready_fd, std::string(result.message()));
    PrintError("agent", result);
    return kExitFailure;
  }
  ReportFailure(&ready_fd, "stopped before it registered");
  return kExitOk;
}

}  // namespace launcher
}  // namespace tunefleet
