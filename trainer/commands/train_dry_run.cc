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
#include "trainer/data/multi_dataset_sampler.h"
#include "trainer/data/prompts.h"

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
  std::vector<const TaskSettings*> settings = {c.task.settings.get()};
  for (const DatasetConfig& d : c.task.datasets) settings.push_back(d.settings.get());
  for (const TaskSettings* s : settings) {
    if (s == nullptr) continue;
    for (const auto& [key, text] : s->Values()) k[absl::StrCat(kTaskSection, ".", key)] = text;
  }
  if (c.task.datasets.empty()) return k;
  nlohmann::ordered_json datasets = nlohmann::ordered_json::object();
  for (const DatasetConfig& d : c.task.datasets) {
    nlohmann::ordered_json& e = datasets[d.name];
    e["train"] = d.train;
    e["format"] = d.format;
    if (!d.columns.empty()) e["columns"] = d.columns;
    if (!d.label_column.empty()) e["label_column"] = d.label_column;
    e["loss"] = d.loss;
    if (!d.prompts.empty()) {
      e["prompts"] = d.prompts;
    } else if (!d.prompt.empty()) {
      e["prompts"] = d.prompt;
    }
  }
  k[absl::StrCat(kTaskSection, ".", kDatasetsKey)] = std::move(datasets);
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
  for (const DatasetConfig& d : c.task.datasets) {
    files.push_back({{"key", absl::StrCat(kTaskSection, ".", kDatasetsKey, ".", d.name, ".train")},
                     {"path", d.train},
                     {"kind", "file"}});
  }
  return files;
}

// The training rows' errors (of task.train, or a dataset's: `t`): reading them (`rows`), or a
// prompts column they lack; "" for none.
std::string DataError(const TrainerConfig& c, const TaskConfig& t,
                      const absl::StatusOr<std::vector<Example>>& rows) {
  if (!rows.ok()) return std::string(rows.status().message());
  const Prompts prompts{t.prompt, t.prompts};
  if (prompts.by_column.empty()) return "";
  absl::StatusOr<std::vector<std::string>> columns =
      TextColumnNames(t.train, t.format, ColumnOptions{t.columns, t.label_column});
  absl::Status s =
      columns.ok() ? CheckPromptColumns(prompts, *columns, c.source, t.train) : columns.status();
  return std::string(s.message());
}

// The training sets: task.train's, or each of task.datasets (DatasetTask).
std::vector<TaskConfig> TrainSets(const TaskConfig& task) {
  if (task.datasets.empty()) return {task};
  std::vector<TaskConfig> sets;
  for (const DatasetConfig& d : task.datasets) sets.push_back(DatasetTask(task, d));
  return sets;
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
  std::vector<int64_t> sizes;
  std::string data_error;
  for (const TaskConfig& t : TrainSets(config->task)) {
    absl::StatusOr<std::vector<Example>> rows =
        ReadDataset(t.train, t.format, ColumnOptions{t.columns, t.label_column}, &warnings);
    sizes.push_back(rows.ok() ? static_cast<int64_t>(rows->size()) : 0);
    if (data_error.empty()) data_error = DataError(*config, t, rows);
  }
  // The samples of an epoch (trainer/data/multi_dataset_sampler.h): each dataset's padded size,
  // summed (round_robin: of the steps it takes).
  const TrainConfig& train = config->train;
  const EpochShape shape = ShapeEpoch(sizes, train.batch_size, train.grad_accum, r.world_size,
                                      ParseMultiDatasetSampler(train.multi_dataset_sampler));
  int64_t n = 0;
  for (int64_t size : sizes) n += size;
  out["train_examples"] = n;
  out["samples_per_epoch"] =
      sizes.size() == 1 ? (n + r.world_size - 1) / r.world_size * r.world_size : shape.samples;
  out["data_error"] = data_error;
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
