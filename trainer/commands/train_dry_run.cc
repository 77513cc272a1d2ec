#include "trainer/commands/train_dry_run.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "nlohmann/json.hpp"
#include "trainer/commands/train_preflight.h"
#include "trainer/config/train_config.h"
#include "trainer/data/datasets.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer train";

// Every key of the schema (TrainerConfigKeys()) with its value, in that order (ResolvedConfigYaml's
// keys, paths as written), then the task type's own keys.
nlohmann::ordered_json Keys(const TrainerConfig& c) {
  nlohmann::ordered_json k = nlohmann::ordered_json::object();
  for (const ConfigField& f : TrainerConfigFields()) {
    k[f.key] = std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, ValueOf(f, c));
  }
  if (c.task.settings != nullptr) {
    for (const auto& [key, text] : c.task.settings->Values()) {
      k[absl::StrCat(kTaskSection, ".", key)] = text;
    }
  }
  return k;
}

// The files and folders the config names that must exist where the trials run (the schema's
// rows of PathKind kFile and kFolder), set ones only, paths as written.
nlohmann::ordered_json Files(const TrainerConfig& c) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const ConfigField& f : TrainerConfigFields()) {
    if (f.path != PathKind::kFile && f.path != PathKind::kFolder) continue;
    const FieldValue value = ValueOf(f, c);
    const std::string* path = std::get_if<std::string>(&value);
    if (path == nullptr || path->empty()) continue;
    files.push_back({{"key", f.key},
                     {"path", *path},
                     {"kind", f.path == PathKind::kFolder ? "folder" : "file"}});
  }
  return files;
}

// Removes each `--check X` / `--check=X` from `args` into `checks`; an error for a --check
// without its value.
absl::Status TakeChecks(std::vector<std::string>* args, std::vector<std::string>* checks) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == "--") {
      rest.insert(rest.end(), args->begin() + static_cast<long>(i), args->end());
      break;
    }
    if (a == "--check") {
      if (i + 1 >= args->size()) return absl::InvalidArgumentError("--check: needs KEY=VALUE");
      checks->push_back((*args)[++i]);
    } else if (absl::StartsWith(a, "--check=")) {
      checks->push_back(a.substr(8));
    } else {
      rest.push_back(a);
    }
  }
  *args = std::move(rest);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> TrainDryRunJson(const DryRunRequest& r) {
  absl::StatusOr<TrainerConfig> config = LoadTrainerConfig(r.config, r.overrides, kUnknownGpus);
  if (!config.ok()) return config.status();
  nlohmann::ordered_json out;
  out["config"] = r.config;
  out["world_size"] = r.world_size;
  std::ostringstream warnings;  // the real run prints them; the dry run's stdout is its JSON
  absl::StatusOr<std::vector<Example>> rows =
      ReadDataset(config->task.train, config->task.format,
                  ColumnOptions{config->task.columns, config->task.label_column}, &warnings);
  const int64_t n = rows.ok() ? static_cast<int64_t>(rows->size()) : 0;
  out["train_examples"] = n;
  out["samples_per_epoch"] = (n + r.world_size - 1) / r.world_size * r.world_size;
  out["data_error"] = rows.ok() ? std::string() : std::string(rows.status().message());
  out["keys"] = Keys(*config);
  out["files"] = Files(*config);
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const std::string& check : r.checks) {
    std::vector<std::string> overrides = r.overrides;
    overrides.push_back(check);
    absl::StatusOr<TrainerConfig> probed = LoadTrainerConfig(r.config, overrides, kUnknownGpus);
    const std::string error = probed.ok() ? "" : std::string(probed.status().message());
    checks.push_back({{"override", check}, {"error", error}});
  }
  out["checks"] = std::move(checks);
  out["preflight"] = TrainPreflightJson(*config, r.config, r.overrides, r.checks, r.world_size);
  return out.dump();
}

bool WantsDryRunJson(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--json" || a == "--json=true") return true;
  }
  return false;
}

int RunTrainDryRunJson(const std::vector<std::string>& args) {
  DryRunRequest request;
  std::vector<std::string> rest = args;
  if (absl::Status s = TakeChecks(&rest, &request.checks); !s.ok()) {
    PrintError(kProgram, s);
    return kExitUsage;
  }
  bool dry_run = false, json = false;
  CommandLine cli(kProgram, "--dry_run --json [--check KEY=VALUE ...] [key=value ...]",
                  "Validates the trainer YAML with its overrides and prints what a sweep needs as\n"
                  "one JSON object (trainer/commands/train_dry_run.h); trains nothing.");
  cli.AddString("config", &request.config, "trainer YAML (required)", "TRAIN.yaml");
  cli.AddBool("dry_run", &dry_run, "required with --json");
  cli.AddBool("json", &json, "print the dry run as JSON");
  cli.AllowOverrides();
  if (int rc = ParseOrExit(cli, rest, kProgram); rc >= 0) return rc;
  absl::Status bad;
  if (!dry_run) bad = absl::InvalidArgumentError("--json: only with --dry_run");
  if (request.config.empty()) bad = absl::InvalidArgumentError("--config is required");
  const char* world = std::getenv("WORLD_SIZE");
  request.world_size = world != nullptr ? EnvInt("WORLD_SIZE", 0) : 1;
  if (request.world_size < 1) {
    bad = absl::InvalidArgumentError(
        absl::StrCat("WORLD_SIZE: expected a positive integer, got '", world, "'"));
  }
  if (!bad.ok()) {
    PrintError(kProgram, bad);
    return kExitUsage;
  }
  request.overrides = cli.overrides();
  absl::StatusOr<std::string> text = TrainDryRunJson(request);
  if (!text.ok()) {
    PrintError(kProgram, text.status());
    return kExitUsage;
  }
  std::fputs(text->c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
