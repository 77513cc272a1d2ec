#include "hpo/config/program_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/arg_template.h"
#include "common/child_process.h"
#include "common/clip.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

// The folder part of `path` with its slash ("" for a bare file name).
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

absl::Status CheckOne(const ConfigMap& trainer, const std::string& key, const std::string& what,
                      const std::string& text, const std::vector<std::string>& known) {
  absl::StatusOr<std::vector<std::string>> names = TemplateNames(text);
  if (!names.ok()) {
    return trainer.Error(
        key, absl::StrCat(what, " ('", ClipValue(text), "'): ", names.status().message()));
  }
  for (const std::string& name : *names) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    return trainer.Error(
        key, absl::StrCat(what, " ('", ClipValue(text), "'): {", ClipValue(name),
                          "} is not a parameter (a trial gives ", absl::StrJoin(known, ", "),
                          "; '{{' is a literal brace)"));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& ProgramKeys() {
  static const auto* const kKeys = new std::vector<std::string>{
      "program", "env", "workdir", "launch", "kill_grace_s", "gpu_memory_mib"};
  return *kKeys;
}

absl::Status ParseProgram(const ConfigMap& trainer, ProgramSpec* p) {
  if (absl::Status s = trainer.Get("program", &p->argv); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(s.message(),
                     " (the command as a list: [python3, train.py, --lr, '{lr}']; quote an "
                     "argument that starts with '{')"));
  }
  if (p->argv.empty()) return trainer.Error("program", "must name a program: [python3, train.py]");
  if (p->argv[0].empty()) return trainer.Error("program", "the program's name is empty");
  if (trainer.Has("env")) {
    ASSIGN_OR_RETURN(ConfigMap env, trainer.GetMap("env"));
    RETURN_IF_ERROR(GetTrialEnv(env, &p->env));
  }
  RETURN_IF_ERROR(trainer.GetOptional("workdir", &p->workdir));
  std::string launch = "per_rank";
  RETURN_IF_ERROR(trainer.GetEnum("launch", {"per_rank", "once"}, &launch));
  p->launch_once = launch == "once";
  RETURN_IF_ERROR(trainer.GetOptional("kill_grace_s", &p->kill_grace_s));
  if (!(p->kill_grace_s >= 0 && p->kill_grace_s <= 3600)) {
    return trainer.Error("kill_grace_s",
                         absl::StrCat("must be in [0, 3600], got ", p->kill_grace_s));
  }
  RETURN_IF_ERROR(trainer.GetOptional("gpu_memory_mib", &p->gpu_memory_mib));
  if (!(p->gpu_memory_mib >= 0 && p->gpu_memory_mib <= 1e8)) {
    return trainer.Error("gpu_memory_mib",
                         absl::StrCat("must be in [0, 1e8] MiB, got ", p->gpu_memory_mib));
  }
  return absl::OkStatus();
}

std::vector<std::string> ProgramValueNames(const std::vector<std::string>& params) {
  std::vector<std::string> names = params;
  for (const char* n : {"lr_base", "lr_effective", "trial", "trial_dir"}) names.push_back(n);
  return names;
}

absl::Status CheckProgramTemplates(const ConfigMap& trainer, const ProgramSpec& p,
                                   const std::vector<std::string>& known) {
  for (size_t i = 0; i < p.argv.size(); ++i) {
    RETURN_IF_ERROR(
        CheckOne(trainer, "program", absl::StrCat("argument ", i + 1), p.argv[i], known));
  }
  for (const auto& [name, text] : p.env) {
    RETURN_IF_ERROR(CheckOne(trainer, "env", name, text, known));
  }
  return absl::OkStatus();
}

absl::Status ResolveProgramFolder(ProgramSpec& p, const std::string& sweep_file) {
  std::string dir = p.workdir;
  if (dir.empty() || dir[0] != '/') {
    std::string base = FolderOf(sweep_file);
    if (base.empty() || base[0] != '/') {
      char cwd[PATH_MAX];
      if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
        return absl::InternalError(absl::StrCat("getcwd: ", std::strerror(errno)));
      }
      base = absl::StrCat(cwd, "/", base);
    }
    dir = dir.empty() || dir == "." ? base : base + dir;
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st;
  char real[PATH_MAX];
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      ::realpath(dir.c_str(), real) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(sweep_file, ": trainer.workdir: ", ClipPath(dir), ": no such folder"));
  }
  p.workdir = real;
  return absl::OkStatus();
}

absl::Status CheckProgramHere(const ProgramSpec& p, const std::string& sweep_file) {
  if (p.argv.empty() || p.argv[0].find('{') != std::string::npos) return absl::OkStatus();
  const char* path = std::getenv("PATH");
  absl::StatusOr<std::string> found =
      FindProgram(p.argv[0], path == nullptr ? "" : path, p.workdir);
  if (found.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(sweep_file, ": trainer.program: ", found.status().message()));
}

}  // namespace hpo
}  // namespace tunefleet
