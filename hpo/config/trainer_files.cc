#include "hpo/config/trainer_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_parameters.h"

namespace tunefleet {
namespace hpo {
namespace {

absl::Status Bad(const std::string& key, const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(key, ": ", ClipPath(path), ": ", why));
}

// `path` is a readable file (or a folder we may list and enter).
absl::Status CheckPath(const std::string& key, const std::string& path, bool folder) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR)
      return Bad(key, path, folder ? "no such folder" : "no such file");
    return Bad(key, path, std::strerror(e));
  }
  if (folder && !S_ISDIR(st.st_mode)) return Bad(key, path, "not a folder");
  if (!folder && S_ISDIR(st.st_mode)) return Bad(key, path, "is a folder, not a file");
  const int mode = folder ? (R_OK | X_OK) : R_OK;
  if (::access(path.c_str(), mode) != 0) {
    return Bad(key, path, absl::StrCat("not readable (", std::strerror(errno), ")"));
  }
  return absl::OkStatus();
}

// Checks one file of `key` at `path`; for the model folder, what the trainer said of it too
// (the config's own, or a searched one's; nothing when the trainer did not look at `path`).
absl::Status CheckFile(const TrainerPreflight& p, const TrainerFile& file,
                       const std::string& path) {
  RETURN_IF_ERROR(CheckPath(file.key, path, file.folder));
  if (file.key != p.model_key) return absl::OkStatus();
  std::string error;
  if (path == p.model_path) {
    error = p.model_error;
  } else if (auto it = p.other_models.find(path); it != p.other_models.end()) {
    error = it->second;
  }
  if (error.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(file.key, ": ", error));
}

}  // namespace

absl::Status CheckTrainerFiles(const TrainerPreflight& preflight) {
  for (const TrainerFile& file : preflight.files) {
    RETURN_IF_ERROR(CheckFile(preflight, file, file.path));
  }
  return absl::OkStatus();
}

absl::Status CheckSweepTrainerFiles(const SweepConfig& sweep) {
  if (!sweep.trainer.native()) return absl::OkStatus();
  const TrainerPreflight& preflight = sweep.trainer.preflight;
  const std::string where =
      absl::StrCat(sweep.source, ": trainer config ", ClipPath(sweep.trainer.config), ": ");
  for (const TrainerFile& file : preflight.files) {
    // A searched key's values replace the config's own value in every trial.
    if (const ParamSpec* p = sweep.FindParam(file.key)) {
      for (const std::string& label : p->labels) {
        absl::Status s = label.empty() ? absl::OkStatus() : CheckFile(preflight, file, label);
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(sweep.source, ":", p->line, ": parameters.", s.message()));
        }
      }
      continue;
    }
    absl::Status s = CheckFile(preflight, file, file.path);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, s.message()));
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
