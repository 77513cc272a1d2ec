// agent: owns one node. Registers its GPUs (or CPU slots) with the head, starts a trainer
// process per assigned rank, relays their reports, delivers stop decisions, reports exits.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdlib>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "absl/strings/str_split.h"
#include "comm/curve_auth.h"
#include "comm/endpoint.h"
#include "common/binary_path.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/trial_env.h"
#include "common/runtime_dir.h"
#include "common/status_macros.h"
#include "common/signals.h"
#include "launcher/agent/agent.h"
#include "launcher/agent/detach.h"
#include "launcher/host_filter.h"

namespace tunefleet {
namespace launcher {
namespace {

// Flag ranges: beyond them a value is a mistake (--slots 100000000), not a choice.
constexpr int64_t kMaxSlots = 4096;
constexpr int64_t kMaxKillGraceMs = 600000;
constexpr int64_t kMaxHeadGraceS = 86400;

// `path` (given as `flag`) is a program this agent may run: a regular file it can execute.
absl::Status CheckProgram(const std::string& flag, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": not an executable file"));
  }
  return absl::OkStatus();
}

std::string HostName() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

int Main(int argc, char** argv) {
  std::string head, name, keys, trainer, log_dir, address, cache_dir, runtime_dir, allow_dirs,
      allow_env, gpu_ids, exclude_gpu_ids;
  int64_t slots = 0, kill_grace_ms = 5000, head_grace_s = 300;
  bool detach = false;
  CommandLine cli("agent", "",
                  "The tunefleet node agent: registers this machine's GPUs with the head and\n"
                  "runs the trainer ranks the head assigns to it, one process per rank.");
  cli.AddString("head", &head, "the head's address (required)", "tcp://HOST:PORT");
  cli.AddInt("slots", &slots,
             "ranks this node runs at once: CPU slots where there is no GPU (default 1); with "
             "GPUs, at most this many of them (default all)");
  cli.AddString("gpu_ids", &gpu_ids,
                "use only these of the GPUs this host shows (indices in CUDA_VISIBLE_DEVICES "
                "order; the head's --include passes them)", "ID,...");
  cli.AddString("exclude_gpu_ids", &exclude_gpu_ids,
                "use all the GPUs this host shows but these (the head's --exclude)", "ID,...");
  cli.AddString("name", &name, "name to register under (default: the host name)", "NAME");
  cli.AddString("address", &address,
                "address other nodes reach this one at, for MASTER_ADDR (default: the local "
                "address on the route to the head)", "IP");
  cli.AddString("keys", &keys, "CURVE key folder from head --gen_keys", "DIR");
  cli.AddString("trainer", &trainer, "trainer binary (default: the one built beside this agent)", "PATH");
  cli.AddString("runtime_dir", &runtime_dir,
                "the agent's private folder (its lock, its trainers' socket, agent.log when "
                "detached): created 0700, refused when another user owns it or it is a link "
                "(default: RUNTIME/agent-NAME, RUNTIME being $XDG_RUNTIME_DIR/tunefleet or "
                "/tmp/tunefleet-UID)", "DIR");
  cli.AddString("log_dir", &log_dir, "rank logs of trials that name no folder (default: the runtime folder)", "DIR");
  cli.AddString("cache_dir", &cache_dir,
                "files the head stages for trials, by content hash (default RUNTIME_DIR/cache)", "DIR");
  cli.AddString("allow_dir", &allow_dirs,
                "folders (comma-separated) a trial's log and output folders may lie in, beside "
                "the runtime folder, --log_dir, the working directory and $HOME", "DIR,...");
  cli.AddString("allow_env", &allow_env,
                "environment variables (comma-separated) a trial may set for its trainers beside "
                "the named NCCL_, CUDA_, OMP_, GLOO_, TORCH_ and TUNEFLEET_ ones (never LD_*, "
                "*PLUGIN*, *INJECTION* or the agent's TUNEFLEET_ ones)", "NAME,...");
  cli.AddInt("kill_grace_ms", &kill_grace_ms, "time a stopped rank gets between SIGTERM and SIGKILL");
  cli.AddInt("head_grace_s", &head_grace_s,
             "after losing the head, keep the runs going this long while registering again");
  cli.AddBool("detach", &detach,
              "run in the background (own session, output to LOG_DIR/agent.log) once registered; "
              "an agent of this name already running here is left alone (exit 0)");
  cli.ExpectPositional(0, 0);
  if (const int exit_code =
          ParseOrExit(cli, std::vector<std::string>(argv + 1, argv + argc), "agent");
      exit_code >= 0) {
    return exit_code;
  }
  absl::Status status;
  if (status.ok() && head.empty()) status = absl::InvalidArgumentError("--head is required");
  if (status.ok()) {
    absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(head, /*for_bind=*/false);
    if (!parsed.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat("--head: ", parsed.status().message()));
    } else {
      head = parsed->text;
      // Another user's private socket: say so now rather than wait for a head that never
      // answers (a missing one may come: the agent keeps trying).
      if (parsed->ipc) {
        absl::Status reachable = comm::CheckIpcReachable(parsed->path);
        if (absl::IsPermissionDenied(reachable)) status = reachable;
      }
    }
  }
  if (status.ok() && !name.empty() && !SafeName(name)) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "--name '", name.substr(0, 64), name.size() > 64 ? "...'" : "'",
        ": 1-64 letters, digits, '.', '-' or '_'"));
  }
  for (const std::string& var : std::vector<std::string>(absl::StrSplit(allow_env, ',', absl::SkipEmpty()))) {
    if (const std::string why = TrialEnvForbidden(var); status.ok() && !why.empty()) {
      status = absl::InvalidArgumentError(
          absl::StrCat("--allow_env: ", var, " ", why, ": it never passes (README, resources.env)"));
    }
  }
  if (status.ok() && (slots < 0 || slots > kMaxSlots)) {
    status = absl::InvalidArgumentError(
        absl::StrCat("--slots must be between 0 and ", kMaxSlots, ", got ", slots));
  }
  if (status.ok() && (kill_grace_ms < 0 || kill_grace_ms > kMaxKillGraceMs)) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "--kill_grace_ms must be between 0 and ", kMaxKillGraceMs, " (10 minutes), got ", kill_grace_ms));
  }
  if (status.ok() && !trainer.empty()) status = CheckProgram("--trainer", trainer);
  std::vector<int> gpu_id_list, exclude_gpu_id_list;
  if (status.ok() && !gpu_ids.empty() && !exclude_gpu_ids.empty()) {
    status = absl::InvalidArgumentError("--gpu_ids and --exclude_gpu_ids: give one or the other");
  }
  if (status.ok() && !gpu_ids.empty()) {
    status = AssignOrStatus(ParseGpuIds(gpu_ids, "--gpu_ids"), &gpu_id_list);
  }
  if (status.ok() && !exclude_gpu_ids.empty()) {
    status = AssignOrStatus(ParseGpuIds(exclude_gpu_ids, "--exclude_gpu_ids"), &exclude_gpu_id_list);
  }
  if (status.ok() && (head_grace_s < 0 || head_grace_s > kMaxHeadGraceS)) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "--head_grace_s must be between 0 and ", kMaxHeadGraceS, " (a day), got ", head_grace_s));
  }
  if (status.ok() && !keys.empty()) {
    auto loaded = comm::LoadClientKeys(keys);
    status = loaded.status();
  }
  if (status.ok() && trainer.empty()) {
    status = AssignOrStatus(FindSiblingBinary("trainer/trainer"), &trainer);
  }
  if (!status.ok()) {
    PrintError("agent", status);
    return kExitUsage;
  }
  if (name.empty()) name = HostName();
  if (!SafeName(name)) name = "local";  // a host name no file may carry
  // The agent's own folder: never one another user made or could plant links in.
  absl::Status private_dir = runtime_dir.empty() ? absl::OkStatus() : PrivateDir(runtime_dir);
  if (!private_dir.ok()) {  // the folder the flag names: a usage error
    PrintError("agent", absl::InvalidArgumentError(
                            absl::StrCat("--runtime_dir: ", private_dir.message())));
    return kExitUsage;
  }
  if (runtime_dir.empty()) {
    private_dir = AssignOrStatus(RuntimeSubdir("agent-" + name), &runtime_dir);
  }
  if (!private_dir.ok()) {
    PrintError("agent", private_dir);
    return kExitFailure;
  }
  if (!log_dir.empty()) {
    if (absl::Status made = MakeDirs(log_dir); !made.ok()) {
      PrintError("agent", made);
      return kExitFailure;
    }
  }
  // One agent per name on a host: a restarted head starting its agents again finds them.
  const std::string lock_path = JoinPath(runtime_dir, "agent.lock");
  absl::StatusOr<int> lock = LockInstance(lock_path);
  if (!lock.ok()) {
    if (detach && lock.status().code() == absl::StatusCode::kAlreadyExists) {
      // Starting the node's agent is idempotent: the running one registers by itself.
      std::cout << "agent " << name << ": " << lock.status().message() << "; leaving it be"
                << std::endl;
      return kExitOk;
    }
    PrintError("agent", lock.status());
    return kExitFailure;
  }
  int ready_fd = -1;
  if (detach) {
    absl::StatusOr<Detached> detached = Detach(JoinPath(runtime_dir, "agent.log"), "agent " + name);
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
  Agent::Options options;
  options.head = head;
  options.keys_dir = keys;
  options.name = name;
  options.address = address;
  options.slots = static_cast<int>(slots);
  options.gpu_ids = gpu_id_list;
  options.exclude_gpu_ids = exclude_gpu_id_list;
  options.trainer_binary = trainer;
  options.runtime_dir = runtime_dir;
  options.log_dir = log_dir;
  options.cache_dir = cache_dir;
  options.allow_dirs = absl::StrSplit(allow_dirs, ',', absl::SkipEmpty());
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) != nullptr) options.allow_dirs.push_back(cwd);
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/' && home[1] != 0) {
    options.allow_dirs.push_back(home);
  }
  for (const std::string& var : std::vector<std::string>(absl::StrSplit(allow_env, ',', absl::SkipEmpty()))) {
    options.allow_env.insert(var);
  }
  options.kill_grace = absl::Milliseconds(kill_grace_ms);
  options.head_grace = absl::Seconds(head_grace_s);
  options.on_registered = [&ready_fd] { ReportReady(&ready_fd); };
  absl::Status result;
  {
    Agent agent(options, &signals);
    result = agent.Run();
  }
  // A clean exit leaves nothing behind (a killed agent's files are taken over by the next).
  ::unlink(JoinPath(runtime_dir, "trainers.sock").c_str());
  ::unlink(lock_path.c_str());
  if (!result.ok()) {
    ReportFailure(&ready_fd, std::string(result.message()));
    PrintError("agent", result);
    return kExitFailure;
  }
  ReportFailure(&ready_fd, "stopped before it registered");
  return kExitOk;
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain("agent", tunefleet::launcher::Main, argc, argv);
}
