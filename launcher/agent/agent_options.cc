#include "launcher/agent/agent_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "comm/curve_auth.h"
#include "comm/endpoint.h"
#include "common/binary_path.h"
#include "common/runtime_dir.h"
#include "common/status_macros.h"
#include "common/trial_env.h"
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

// --head: a connectable endpoint, and not another user's private socket (say so now rather
// than wait for a head that never answers; a missing one may come: the agent keeps trying).
absl::Status ParseHead(const std::string& head, AgentOptions& o) {
  if (head.empty()) return absl::InvalidArgumentError("--head is required");
  absl::StatusOr<comm::Endpoint> parsed = comm::ParseEndpoint(head, /*for_bind=*/false);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--head: ", parsed.status().message()));
  }
  o.head = parsed->text;
  if (parsed->ipc) {
    absl::Status reachable = comm::CheckIpcReachable(parsed->path);
    if (absl::IsPermissionDenied(reachable)) return reachable;
  }
  return absl::OkStatus();
}

// --allow_env: names a trial may set, none of those that never pass.
absl::Status ParseAllowEnv(const std::string& allow_env, AgentOptions& o) {
  for (const std::string& var :
       std::vector<std::string>(absl::StrSplit(allow_env, ',', absl::SkipEmpty()))) {
    if (const std::string why = TrialEnvForbidden(var); !why.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--allow_env: ", var, " ", why, ": it never passes (docs/CONFIG.md, resources.env)"));
    }
    o.allow_env.insert(var);
  }
  return absl::OkStatus();
}

// --slots, --prewarm_workers and --kill_grace_ms within their ranges.
absl::Status CheckCounts(const AgentFlags& flags) {
  if (flags.slots < 0 || flags.slots > kMaxSlots) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slots must be between 0 and ", kMaxSlots, ", got ", flags.slots));
  }
  if (flags.prewarm_workers < 0 || flags.prewarm_workers > kMaxSlots) {
    return absl::InvalidArgumentError(absl::StrCat("--prewarm_workers must be between 0 and ",
                                                   kMaxSlots, ", got ", flags.prewarm_workers));
  }
  if (flags.kill_grace_ms < 0 || flags.kill_grace_ms > kMaxKillGraceMs) {
    return absl::InvalidArgumentError(absl::StrCat("--kill_grace_ms must be between 0 and ",
                                                   kMaxKillGraceMs, " (10 minutes), got ",
                                                   flags.kill_grace_ms));
  }
  return absl::OkStatus();
}

// --gpu_ids or --exclude_gpu_ids (not both).
absl::Status ParseGpuFlags(const AgentFlags& flags, AgentOptions& o) {
  if (!flags.gpu_ids.empty() && !flags.exclude_gpu_ids.empty()) {
    return absl::InvalidArgumentError("--gpu_ids and --exclude_gpu_ids: give one or the other");
  }
  if (!flags.gpu_ids.empty()) {
    ASSIGN_OR_RETURN(o.gpu_ids, ParseGpuIds(flags.gpu_ids, "--gpu_ids"));
  }
  if (!flags.exclude_gpu_ids.empty()) {
    ASSIGN_OR_RETURN(o.exclude_gpu_ids, ParseGpuIds(flags.exclude_gpu_ids, "--exclude_gpu_ids"));
  }
  return absl::OkStatus();
}

// The flags taken as given, once every check passed.
void CopyCheckedFlags(const AgentFlags& flags, AgentOptions& o) {
  o.runtime_dir = flags.runtime_dir;
  o.keys = flags.keys;
  o.log_dir = flags.log_dir;
  o.address = flags.address;
  o.cache_dir = flags.cache_dir;
  o.allow_dirs = absl::StrSplit(flags.allow_dirs, ',', absl::SkipEmpty());
  o.slots = static_cast<int>(flags.slots);
  o.prewarm_workers = static_cast<int>(flags.prewarm_workers);
  o.prewarm_mps = flags.prewarm_mps;
  o.kill_grace = absl::Milliseconds(flags.kill_grace_ms);
  o.head_grace = absl::Seconds(flags.head_grace_s);
  o.detach = flags.detach;
  o.mps = flags.mps;
  o.programs = flags.programs;
}

}  // namespace

void AddAgentFlags(CommandLine* cli, AgentFlags* f) {
  cli->AddString("head", &f->head, "the head's address (required)", "tcp://HOST:PORT");
  cli->AddInt("slots", &f->slots,
              "ranks this node runs at once: CPU slots where there is no GPU (default 1); with "
              "GPUs, at most this many of them (default all)");
  cli->AddString("gpu_ids", &f->gpu_ids,
                 "use only these of the GPUs this host shows (indices in CUDA_VISIBLE_DEVICES "
                 "order; the head's --include passes them)",
                 "ID,...");
  cli->AddString("exclude_gpu_ids", &f->exclude_gpu_ids,
                 "use all the GPUs this host shows but these (the head's --exclude)", "ID,...");
  cli->AddString("name", &f->name, "name to register under (default: the host name)", "NAME");
  cli->AddString("address", &f->address,
                 "address other nodes reach this one at, for MASTER_ADDR (default: the local "
                 "address on the route to the head)",
                 "IP");
  cli->AddString("keys", &f->keys, "CURVE key folder from head --gen_keys", "DIR");
  cli->AddString("trainer", &f->trainer,
                 "trainer binary (default: the one built beside this agent)", "PATH");
  cli->AddString("runtime_dir", &f->runtime_dir,
                 "the agent's private folder (its lock, its trainers' socket, agent.log when "
                 "detached): created 0700, refused when another user owns it or it is a link "
                 "(default: RUNTIME/agent-NAME, RUNTIME being $XDG_RUNTIME_DIR/tunefleet or "
                 "/tmp/tunefleet-UID)",
                 "DIR");
  cli->AddString("log_dir", &f->log_dir,
                 "rank logs of trials that name no folder (default: the runtime folder)", "DIR");
  cli->AddString("cache_dir", &f->cache_dir,
                 "files the head stages for trials, by content hash (default RUNTIME_DIR/cache)",
                 "DIR");
  cli->AddString("allow_dir", &f->allow_dirs,
                 "folders (comma-separated) a trial's log and output folders may lie in, beside "
                 "the runtime folder, --log_dir, the working directory and $HOME",
                 "DIR,...");
  cli->AddString("allow_env", &f->allow_env,
                 "environment variables (comma-separated) a trial may set for its trainers beside "
                 "the named NCCL_, CUDA_, OMP_, GLOO_, TORCH_ and TUNEFLEET_ ones (never LD_*, "
                 "*PLUGIN*, *INJECTION* or the agent's TUNEFLEET_ ones)",
                 "NAME,...");
  cli->AddInt("kill_grace_ms", &f->kill_grace_ms,
              "time a stopped rank gets between SIGTERM and SIGKILL");
  cli->AddInt("head_grace_s", &f->head_grace_s,
              "after losing the head, keep the runs going this long while registering again");
  cli->AddBool("mps", &f->mps,
               "run trials that share a GPU (resources.trials_per_gpu) as clients of a CUDA MPS "
               "daemon of this agent's own, where nvidia-cuda-mps-control is on PATH");
  cli->AddBool("programs", &f->programs,
               "run trials whose command is a program of the sweep's own (hpo's trainer.program), "
               "as this agent's user; --noprograms refuses them (tunefleet's trainer only)");
  cli->AddInt("prewarm_workers", &f->prewarm_workers,
              "start this many warm trainer workers at once, before any trial (hpo's dev mode: "
              "its concurrent trials), so that their start overlaps the sweep's own; each takes "
              "the environment of the first trial it runs");
  cli->AddBool("prewarm_mps", &f->prewarm_mps,
               "start the MPS daemon and its server at once, not at the first trial that may "
               "share a GPU (hpo's dev mode: a sweep whose trials share GPUs)");
  cli->AddBool("detach", &f->detach,
               "run in the background (own session, output to LOG_DIR/agent.log) once registered; "
               "an agent of this name already running here is left alone (exit 0)");
}

absl::StatusOr<AgentOptions> AgentOptions::FromFlags(const AgentFlags& flags) {
  AgentOptions o;
  RETURN_IF_ERROR(ParseHead(flags.head, o));
  if (!flags.name.empty() && !SafeName(flags.name)) {
    return absl::InvalidArgumentError(absl::StrCat("--name '", flags.name.substr(0, 64),
                                                   flags.name.size() > 64 ? "...'" : "'",
                                                   ": 1-64 letters, digits, '.', '-' or '_'"));
  }
  RETURN_IF_ERROR(ParseAllowEnv(flags.allow_env, o));
  RETURN_IF_ERROR(CheckCounts(flags));
  if (!flags.trainer.empty()) RETURN_IF_ERROR(CheckProgram("--trainer", flags.trainer));
  RETURN_IF_ERROR(ParseGpuFlags(flags, o));
  if (flags.head_grace_s < 0 || flags.head_grace_s > kMaxHeadGraceS) {
    return absl::InvalidArgumentError(absl::StrCat("--head_grace_s must be between 0 and ",
                                                   kMaxHeadGraceS, " (a day), got ",
                                                   flags.head_grace_s));
  }
  if (!flags.keys.empty()) RETURN_IF_ERROR(comm::LoadClientKeys(flags.keys).status());
  o.trainer = flags.trainer;
  if (o.trainer.empty()) {
    ASSIGN_OR_RETURN(o.trainer, FindSiblingBinary("trainer/trainer"));
  }
  o.name = flags.name.empty() ? HostName() : flags.name;
  if (!SafeName(o.name)) o.name = "local";  // a host name no file may carry
  // The agent's own folder: never one another user made or could plant links in.
  if (!flags.runtime_dir.empty()) {
    if (absl::Status made = PrivateDir(flags.runtime_dir); !made.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--runtime_dir: ", made.message()));
    }
  }
  CopyCheckedFlags(flags, o);
  return o;
}

}  // namespace launcher
}  // namespace tunefleet
