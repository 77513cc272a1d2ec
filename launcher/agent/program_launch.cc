#include "launcher/agent/program_launch.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/safe_path.h"
#include "launcher/agent/trial_guard.h"

namespace tunefleet {
namespace launcher {
namespace {

// The variables of a process standing for `locals`, on top of the run's.
std::map<std::string, std::string> ProcessEnv(const comm::Assign& assign,
                                              const ProgramLaunch& launch,
                                              const std::vector<int>& locals) {
  const comm::TrialSpec& spec = assign.trial();
  std::map<std::string, std::string> env;
  if (spec.program().launch_once()) {
    RankPlace node = launch.place;
    node.local_world_size = assign.ranks_size();
    env = TorchrunEnv(node);
    env.erase("RANK");  // the program's own ranks have them
    env.erase("LOCAL_RANK");
    std::vector<std::string> gpus;  // none on CPU slots
    for (int i : locals) {
      if (!launch.gpus[static_cast<size_t>(i)].empty())
        gpus.push_back(launch.gpus[static_cast<size_t>(i)]);
    }
    env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(gpus, ",");
    env["PET_NNODES"] = std::to_string(node.group_world_size);
    env["PET_NPROC_PER_NODE"] = std::to_string(node.local_world_size);
    env["PET_NODE_RANK"] = std::to_string(node.group_rank);
    env["PET_MASTER_ADDR"] = node.master_addr;
    env["PET_MASTER_PORT"] = std::to_string(node.master_port);
  } else {
    RankPlace place = launch.place;
    place.rank = assign.ranks(locals[0]);
    place.local_rank = locals[0];
    place.local_world_size = assign.ranks_size();
    env = TorchrunEnv(place);
    env["CUDA_VISIBLE_DEVICES"] = launch.gpus[static_cast<size_t>(locals[0])];
  }
  env["TUNEFLEET_TRIAL_DIR"] = spec.program().trial_dir();
  env["TUNEFLEET_PARAMS"] = spec.params_json().empty() ? "{}" : spec.params_json();
  env["TUNEFLEET_METRICS"] = spec.program().metrics_path();
  for (const auto& [k, v] : launch.env) env.emplace(k, v);  // the rank's own win
  return env;
}

// The trial's folder, and on rank 0's agent its metrics file, made empty.
absl::Status MakeTrialFiles(const comm::Assign& assign, const ProgramLaunch& launch) {
  const comm::ProgramRun& p = assign.trial().program();
  if (p.trial_dir().empty() || p.trial_dir()[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("the trial's folder '", p.trial_dir(), "' is not an absolute path"));
  }
  if (absl::Status s = CheckTrialPath("trial_dir", p.trial_dir(), launch.allow_dirs); !s.ok()) {
    return s;
  }
  if (absl::Status s = MakeDirs(p.trial_dir()); !s.ok()) return s;
  if (!LeadsProgram(assign)) return absl::OkStatus();
  if (absl::Status s = CheckTrialPath("the metrics file", p.metrics_path(), launch.allow_dirs);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<int> fd = OpenSafeFile(p.metrics_path(), O_WRONLY | O_CREAT | O_TRUNC, 0666,
                                        /*make_folders=*/true);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  return absl::OkStatus();
}

}  // namespace

bool LeadsProgram(const comm::Assign& assign) {
  return assign.ranks_size() > 0 && assign.ranks(0) == 0;
}

absl::StatusOr<std::vector<ProgramProcess>> PrepareProgram(const comm::Assign& assign,
                                                           const ProgramLaunch& launch,
                                                           bool* refused) {
  const comm::TrialSpec& spec = assign.trial();
  *refused = true;
  if (spec.argv_size() == 0) return absl::InvalidArgumentError("the program's command is empty");
  const char* path = std::getenv("PATH");
  absl::StatusOr<std::string> binary =
      FindProgram(spec.argv(0), path == nullptr ? "" : path, spec.program().workdir());
  if (!binary.ok()) return binary.status();
  if (absl::Status s = MakeTrialFiles(assign, launch); !s.ok()) return s;
  *refused = false;
  std::vector<std::vector<int>> groups;
  if (spec.program().launch_once()) {
    groups.emplace_back();
    for (int i = 0; i < assign.ranks_size(); ++i) groups.back().push_back(i);
  } else {
    for (int i = 0; i < assign.ranks_size(); ++i) groups.push_back({i});
  }
  std::vector<ProgramProcess> processes;
  for (const std::vector<int>& locals : groups) {
    ProgramProcess p;
    p.locals = locals;
    p.spec.binary = *binary;
    p.spec.args.assign(spec.argv().begin() + 1, spec.argv().end());
    p.spec.working_dir = spec.program().workdir();
    p.spec.env = ProcessEnv(assign, launch, locals);
    p.spec.log_path = absl::StrCat(launch.log_dir, "/trial-", spec.trial(), "/rank-",
                                   assign.ranks(locals[0]), ".log");
    processes.push_back(std::move(p));
  }
  return processes;
}

}  // namespace launcher
}  // namespace tunefleet
