#include "hpo/config/trainer_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clip.h"
#include "common/status_macros.h"
#include "hpo/config/sweep_parameters.h"
#include "trainer/data/tokenizer.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace hpo {
namespace {

enum class Kind { kFile, kFolder };

absl::Status Bad(const std::string& key, const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(key, ": ", ClipPath(path), ": ", why));
}

// `path` is a readable file (or a folder we may list and enter).
absl::Status CheckPath(const std::string& key, const std::string& path, Kind kind) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) {
      return Bad(key, path, kind == Kind::kFolder ? "no such folder" : "no such file");
    }
    return Bad(key, path, std::strerror(e));
  }
  if (kind == Kind::kFolder && !S_ISDIR(st.st_mode)) return Bad(key, path, "not a folder");
  if (kind == Kind::kFile && S_ISDIR(st.st_mode)) return Bad(key, path, "is a folder, not a file");
  const int mode = kind == Kind::kFolder ? (R_OK | X_OK) : R_OK;
  if (::access(path.c_str(), mode) != 0) {
    return Bad(key, path, absl::StrCat("not readable (", std::strerror(errno), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckModelFolder(const std::string& key, const std::string& dir) {
  RETURN_IF_ERROR(CheckPath(key, dir, Kind::kFolder));
  for (const char* name : {"config.json"}) {
    const std::string file = absl::StrCat(dir, dir.back() == '/' ? "" : "/", name);
    struct stat st;
    if (::stat(file.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) {
      return Bad(key, dir, absl::StrCat("the model folder holds no ", name));
    }
    if (::access(file.c_str(), R_OK) != 0) {
      return Bad(key, dir, absl::StrCat(name, " is not readable (", std::strerror(errno), ")"));
    }
  }
  // What every trial would fail on: a config.json the trainer cannot read.
  absl::StatusOr<trainer::BertConfig> config =
      trainer::ReadModelConfig(absl::StrCat(dir, dir.back() == '/' ? "" : "/", "config.json"));
  if (!config.ok())
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", config.status().message()));
  // And a tokenizer it cannot read (none, or a malformed tokenizer.json / vocab.txt / .model).
  absl::StatusOr<std::shared_ptr<const trainer::Tokenizer>> tokenizer =
      trainer::LoadFolderTokenizer(dir);
  if (!tokenizer.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": ", tokenizer.status().message()));
  }
  return absl::OkStatus();
}

// The file keys a trainer config may leave empty.
const std::vector<std::string>& OptionalFileKeys() {
  static const auto* const kKeys = new std::vector<std::string>{
      "task.eval", "task.eval_queries", "task.eval_corpus", "task.eval_qrels", "model.head"};
  return *kKeys;
}

bool IsOptional(const std::string& key) {
  const std::vector<std::string>& keys = OptionalFileKeys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Checks one key's value.
absl::Status CheckKey(const std::string& key, const std::string& value) {
  if (key == "model.path") return CheckModelFolder(key, value);
  if (key == "task.train" || IsOptional(key)) return CheckPath(key, value, Kind::kFile);
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTrainerFiles(const std::map<std::string, std::string>& keys) {
  auto value = [&](const std::string& key) {
    auto it = keys.find(key);
    return it == keys.end() ? std::string() : it->second;
  };
  RETURN_IF_ERROR(CheckKey("model.path", value("model.path")));
  RETURN_IF_ERROR(CheckKey("task.train", value("task.train")));
  for (const std::string& optional : OptionalFileKeys()) {
    if (!value(optional).empty()) RETURN_IF_ERROR(CheckKey(optional, value(optional)));
  }
  return absl::OkStatus();
}

absl::Status CheckSweepTrainerFiles(const SweepConfig& sweep) {
  if (!sweep.trainer.native()) return absl::OkStatus();
  const std::string where =
      absl::StrCat(sweep.source, ": trainer config ", ClipPath(sweep.trainer.config), ": ");
  // A searched key's values replace the config's own value in every trial.
  std::vector<std::string> file_keys = {"model.path", "task.train"};
  file_keys.insert(file_keys.end(), OptionalFileKeys().begin(), OptionalFileKeys().end());
  for (const std::string& key : file_keys) {
    if (const ParamSpec* p = sweep.FindParam(key)) {
      for (const std::string& label : p->labels) {
        absl::Status s = label.empty() ? absl::OkStatus() : CheckKey(key, label);
        if (!s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(sweep.source, ":", p->line, ": parameters.", s.message()));
        }
      }
      continue;
    }
    auto it = sweep.trainer.keys.find(key);
    const std::string value = it == sweep.trainer.keys.end() ? "" : it->second;
    if (value.empty() && IsOptional(key)) continue;
    absl::Status s = CheckKey(key, value);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, s.message()));
  }
  return absl::OkStatus();
}

}  // namespace hpo
}  // namespace tunefleet
