#include "trainer/commands/train_dry_run.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

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

// Every key of TrainerConfigKeys() with its value, in that order (ResolvedConfigYaml's keys,
// paths as written).
nlohmann::ordered_json Keys(const TrainerConfig& c) {
  const TrainConfig& t = c.train;
  nlohmann::ordered_json k = nlohmann::ordered_json::object();
  k["model.path"] = c.model.path;
  k["model.pooling"] = c.model.pooling;
  k["model.max_seq_len"] = c.model.max_seq_len;
  k["model.dropout"] = c.model.dropout;
  k["model.head"] = c.model.head;
  k["task.type"] = c.task.type;
  k["task.loss"] = c.task.loss;
  k["task.train"] = c.task.train;
  k["task.eval"] = c.task.eval;
  k["task.format"] = c.task.format;
  k["task.columns"] = c.task.columns;
  k["task.label_column"] = c.task.label_column;
  k["task.eval_kind"] = c.task.eval_kind;
  k["task.eval_queries"] = c.task.eval_queries;
  k["task.eval_corpus"] = c.task.eval_corpus;
  k["task.eval_qrels"] = c.task.eval_qrels;
  k["task.matryoshka_dims"] = c.task.matryoshka_dims;
  k["task.matryoshka_weights"] = c.task.matryoshka_weights;
  k["task.num_labels"] = c.task.num_labels;
  k["task.mnrl_gather"] = c.task.mnrl_gather;
  k["train.epochs"] = t.epochs;
  k["train.max_steps"] = t.max_steps;
  k["train.batch_size"] = t.batch_size;
  k["train.lr"] = t.lr;
  k["train.weight_decay"] = t.weight_decay;
  k["train.warmup_ratio"] = t.warmup_ratio;
  k["train.schedule"] = t.schedule;
  k["train.max_grad_norm"] = t.max_grad_norm;
  k["train.grad_accum"] = t.grad_accum;
  k["train.precision"] = t.precision;
  k["train.seed"] = t.seed;
  k["train.shuffle"] = t.shuffle;
  k["train.group_by_length"] = t.group_by_length;
  k["train.batch_sampler"] = t.batch_sampler;  // "": the loss's default
  k["train.grad_checkpointing"] = t.grad_checkpointing;
  k["train.cuda_graphs"] = t.cuda_graphs;
  k["train.length_buckets"] = t.length_buckets;
  k["train.eval_every_steps"] = t.eval_every_steps;
  k["train.eval_every_samples"] = t.eval_every_samples;
  k["train.eval_every_epochs"] = t.eval_every_epochs;
  k["train.eval_batch_size"] = t.eval_batch_size;
  k["train.log_every_steps"] = t.log_every_steps;
  k["train.ddp_bucket_mb"] = t.ddp_bucket_mb;
  k["train.ddp_timeout_s"] = t.ddp_timeout_s;
  k["train.ddp_comm_dtype"] = t.ddp_comm_dtype;
  k["train.strategy"] = t.strategy;
  if (t.gpu_ids.empty()) {
    k["train.devices"] = t.devices;
  } else {
    k["train.devices"] = t.gpu_ids;
  }
  k["output.dir"] = c.output.dir;
  k["output.save"] = c.output.save;
  k["output.checkpoint"] = c.output.checkpoint;
  k["output.checkpoint_every_s"] = c.output.checkpoint_every_s;
  if (c.task.settings != nullptr) {
    for (const auto& [key, text] : c.task.settings->Values()) k["task." + key] = text;
  }
  return k;
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
