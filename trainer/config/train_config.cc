#include "trainer/config/train_config.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {
namespace {

// Reads the optional `key` into *value (which keeps its default when the key is absent) and
// requires *value >= min; otherwise the error says "must be REQUIREMENT, got VALUE".
template <typename T, typename Bound>
absl::Status GetAtLeast(const ConfigMap& m, const std::string& key, Bound min,
                        absl::string_view requirement, T* value) {
  RETURN_IF_ERROR(m.GetOptional(key, value));
  if (*value < min) return m.Error(key, absl::StrCat("must be ", requirement, ", got ", *value));
  return absl::OkStatus();
}

// As GetAtLeast, requiring lo <= *value <= hi.
template <typename T, typename Bound>
absl::Status GetInRange(const ConfigMap& m, const std::string& key, Bound lo, Bound hi, T* value) {
  RETURN_IF_ERROR(m.GetOptional(key, value));
  if (*value < lo || *value > hi) {
    return m.Error(key, absl::StrCat("must be in [", lo, ", ", hi, "], got ", *value));
  }
  return absl::OkStatus();
}

absl::Status ParseModel(const ConfigMap& m, ModelConfig* model) {
  RETURN_IF_ERROR(m.AllowOnly({"path", "pooling", "max_seq_len", "dropout", "head"}));
  RETURN_IF_ERROR(m.Get("path", &model->path));
  if (model->path.empty()) return m.Error("path", "must name a model directory");
  RETURN_IF_ERROR(m.GetEnum("pooling", {"mean", "cls", "max"}, &model->pooling));
  RETURN_IF_ERROR(GetInRange(m, "max_seq_len", 2, 8192, &model->max_seq_len));
  RETURN_IF_ERROR(m.GetOptional("dropout", &model->dropout));
  if (model->dropout < 0 || model->dropout >= 1) {
    return m.Error("dropout", absl::StrCat("must be in [0, 1), got ", model->dropout));
  }
  RETURN_IF_ERROR(m.GetOptional("head", &model->head));
  return absl::OkStatus();
}

const TaskSectionReader* task_reader = nullptr;

// task.columns, task.label_column, task.matryoshka_dims and task.matryoshka_weights.
absl::Status ParseColumnsAndDims(const ConfigMap& m, TaskConfig* task) {
  RETURN_IF_ERROR(m.GetOptional("columns", &task->columns));
  RETURN_IF_ERROR(m.GetOptional("label_column", &task->label_column));
  const bool named = task->format == "jsonl" || task->format == "csv" || task->format == "tsv";
  for (const char* key : {"columns", "label_column"}) {
    if (m.Has(key) && !named) {
      return m.Error(key, absl::StrCat("only applies to task.format jsonl, csv or tsv (not ",
                                       task->format, ")"));
    }
  }
  for (size_t i = 0; i < task->columns.size(); ++i) {
    const std::string& name = task->columns[i];
    if (name.empty()) return m.Error("columns", "names an empty column");
    if (name == task->label_column) {
      return m.Error("columns", absl::StrCat("\"", name, "\" is task.label_column"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (task->columns[j] == name) {
        return m.Error("columns", absl::StrCat("names \"", name, "\" twice"));
      }
    }
  }
  if (m.Has("columns") && task->columns.size() < 2) {
    return m.Error("columns", "must name at least 2 text columns (e.g. [anchor, positive])");
  }
  RETURN_IF_ERROR(m.GetOptional("matryoshka_dims", &task->matryoshka_dims));
  RETURN_IF_ERROR(m.GetOptional("matryoshka_weights", &task->matryoshka_weights));
  for (size_t i = 0; i < task->matryoshka_dims.size(); ++i) {
    if (task->matryoshka_dims[i] < 1) {
      return m.Error("matryoshka_dims", "must be dims >= 1, e.g. [768, 512, 256, 128, 64]");
    }
    for (size_t j = 0; j < i; ++j) {
      if (task->matryoshka_dims[j] == task->matryoshka_dims[i]) {
        return m.Error("matryoshka_dims",
                       absl::StrCat("names ", task->matryoshka_dims[i], " twice"));
      }
    }
  }
  if (m.Has("matryoshka_weights")) {
    if (task->matryoshka_weights.size() != task->matryoshka_dims.size()) {
      return m.Error(
          "matryoshka_weights",
          absl::StrCat("has ", task->matryoshka_weights.size(), " weights for ",
                       task->matryoshka_dims.size(), " task.matryoshka_dims (one per dim)"));
    }
    for (double w : task->matryoshka_weights) {
      if (!(w > 0) || !std::isfinite(w)) return m.Error("matryoshka_weights", "must be > 0");
    }
  }
  return absl::OkStatus();
}

// task.eval_kind and the retrieval files.
absl::Status ParseEvalKind(const ConfigMap& m, TaskConfig* task) {
  RETURN_IF_ERROR(
      m.GetEnum("eval_kind", {"similarity", "accuracy", "retrieval"}, &task->eval_kind, false));
  RETURN_IF_ERROR(m.GetOptional("eval_queries", &task->eval_queries));
  RETURN_IF_ERROR(m.GetOptional("eval_corpus", &task->eval_corpus));
  RETURN_IF_ERROR(m.GetOptional("eval_qrels", &task->eval_qrels));
  const int files =
      !task->eval_queries.empty() + !task->eval_corpus.empty() + !task->eval_qrels.empty();
  if (files == 0) return absl::OkStatus();
  for (const char* key : {"eval_queries", "eval_corpus", "eval_qrels"}) {
    if (files != 3 && !m.Has(key)) {
      return m.Error(key,
                     "is missing: task.eval_queries, task.eval_corpus and task.eval_qrels "
                     "go together");
    }
  }
  if (!task->eval.empty()) {
    return m.Error("eval_queries",
                   "and task.eval are both given: retrieval files replace "
                   "task.eval (give one or the other)");
  }
  if (task->eval_kind.empty()) task->eval_kind = "retrieval";
  if (task->eval_kind != "retrieval") {
    return m.Error("eval_queries", absl::StrCat("only applies to task.eval_kind retrieval (not ",
                                                task->eval_kind, ")"));
  }
  return absl::OkStatus();
}

absl::Status ParseTask(const ConfigMap& m, TaskConfig* task) {
  std::vector<std::string> allowed = {"type",
                                      "loss",
                                      "train",
                                      "eval",
                                      "format",
                                      "columns",
                                      "label_column",
                                      "eval_kind",
                                      "eval_queries",
                                      "eval_corpus",
                                      "eval_qrels",
                                      "num_labels",
                                      "mnrl_gather",
                                      "matryoshka_dims",
                                      "matryoshka_weights"};
  if (task_reader != nullptr) {
    for (const std::string& key : task_reader->keys) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) allowed.push_back(key);
    }
  }
  RETURN_IF_ERROR(m.AllowOnly(allowed));
  if (task_reader != nullptr) {
    RETURN_IF_ERROR(m.GetEnum("type", task_reader->types, &task->type, /*required=*/true));
    RETURN_IF_ERROR(m.GetEnum("loss", task_reader->losses, &task->loss, /*required=*/false));
  } else {
    RETURN_IF_ERROR(m.Get("type", &task->type));
    RETURN_IF_ERROR(m.GetOptional("loss", &task->loss));
  }
  RETURN_IF_ERROR(m.Get("train", &task->train));
  if (task->train.empty()) return m.Error("train", "must name a data file");
  RETURN_IF_ERROR(m.GetOptional("eval", &task->eval));
  RETURN_IF_ERROR(m.GetEnum("format", {"stsb", "sick", "paws", "mrpc", "tsv", "csv", "jsonl"},
                            &task->format, /*required=*/true));
  RETURN_IF_ERROR(ParseColumnsAndDims(m, task));
  RETURN_IF_ERROR(ParseEvalKind(m, task));
  RETURN_IF_ERROR(m.GetOptional("num_labels", &task->num_labels));
  if (task->num_labels < 0 || task->num_labels == 1) {
    return m.Error("num_labels",
                   absl::StrCat("must be 0 (from the data) or at least 2, got ", task->num_labels));
  }
  RETURN_IF_ERROR(m.GetOptional("mnrl_gather", &task->mnrl_gather));
  return absl::OkStatus();
}

// eval_every_steps, eval_every_samples, eval_every_epochs: each >= 0, at most one > 0. A YAML
// that sets samples or epochs and says nothing of steps drops the steps default.
absl::Status ParseEvalCadence(const ConfigMap& m, TrainConfig* t) {
  const bool steps_given = m.Has("eval_every_steps");
  RETURN_IF_ERROR(
      GetAtLeast(m, "eval_every_steps", 0, ">= 0 (0: only at the end)", &t->eval_every_steps));
  RETURN_IF_ERROR(
      GetAtLeast(m, "eval_every_samples", 0, ">= 0 (0: not by samples)", &t->eval_every_samples));
  RETURN_IF_ERROR(m.GetOptional("eval_every_epochs", &t->eval_every_epochs));
  if (!(t->eval_every_epochs >= 0) || !std::isfinite(t->eval_every_epochs)) {
    return m.Error("eval_every_epochs",
                   absl::StrCat("must be a finite number >= 0 (0: not by epochs), got ",
                                t->eval_every_epochs));
  }
  if (!steps_given && (t->eval_every_samples > 0 || t->eval_every_epochs > 0)) {
    t->eval_every_steps = 0;
  }
  const char* keys[] = {"eval_every_steps", "eval_every_samples", "eval_every_epochs"};
  const bool on[] = {t->eval_every_steps > 0, t->eval_every_samples > 0, t->eval_every_epochs > 0};
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      if (on[a] && on[b]) {
        return m.Error(keys[b], absl::StrCat(keys[a], " and ", keys[b],
                                             " are both > 0: set at most one of them (the "
                                             "other to 0)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTrain(const ConfigMap& m, TrainConfig* t) {
  RETURN_IF_ERROR(m.AllowOnly({"epochs",
                               "max_steps",
                               "batch_size",
                               "lr",
                               "weight_decay",
                               "warmup_ratio",
                               "schedule",
                               "max_grad_norm",
                               "grad_accum",
                               "precision",
                               "seed",
                               "shuffle",
                               "group_by_length",
                               "batch_sampler",
                               "grad_checkpointing",
                               "cuda_graphs",
                               "length_buckets",
                               "eval_every_steps",
                               "eval_every_samples",
                               "eval_every_epochs",
                               "eval_batch_size",
                               "log_every_steps",
                               "ddp_bucket_mb",
                               "ddp_timeout_s",
                               "ddp_comm_dtype",
                               "strategy",
                               "devices"}));
  RETURN_IF_ERROR(GetAtLeast(m, "epochs", 0, ">= 0", &t->epochs));
  RETURN_IF_ERROR(GetAtLeast(m, "max_steps", 0, ">= 0", &t->max_steps));
  if (t->epochs == 0 && t->max_steps == 0) {
    return m.Error("epochs", "epochs and max_steps are both 0: nothing to train");
  }
  RETURN_IF_ERROR(GetAtLeast(m, "batch_size", 1, "a positive integer", &t->batch_size));
  if (t->batch_size > kMaxBatchSize) {
    return m.Error("batch_size",
                   absl::StrCat("must be at most ", kMaxBatchSize, " (2^20), got ", t->batch_size));
  }
  RETURN_IF_ERROR(m.GetOptional("lr", &t->lr));
  if (t->lr <= 0) return m.Error("lr", absl::StrCat("must be > 0, got ", t->lr));
  RETURN_IF_ERROR(GetAtLeast(m, "weight_decay", 0, ">= 0", &t->weight_decay));
  RETURN_IF_ERROR(GetInRange(m, "warmup_ratio", 0, 1, &t->warmup_ratio));
  RETURN_IF_ERROR(m.GetEnum("schedule", {"linear", "constant"}, &t->schedule));
  RETURN_IF_ERROR(GetAtLeast(m, "max_grad_norm", 0, ">= 0 (0: no clipping)", &t->max_grad_norm));
  RETURN_IF_ERROR(GetAtLeast(m, "grad_accum", 1, "a positive integer", &t->grad_accum));
  RETURN_IF_ERROR(m.GetEnum("precision", {"fp32", "bf16", "fp16"}, &t->precision));
  RETURN_IF_ERROR(GetAtLeast(m, "seed", 0, ">= 0", &t->seed));
  RETURN_IF_ERROR(m.GetOptional("shuffle", &t->shuffle));
  RETURN_IF_ERROR(m.GetOptional("group_by_length", &t->group_by_length));
  RETURN_IF_ERROR(m.GetEnum("batch_sampler", {"default", "no_duplicates"}, &t->batch_sampler,
                            /*required=*/false));
  RETURN_IF_ERROR(m.GetOptional("grad_checkpointing", &t->grad_checkpointing));
  RETURN_IF_ERROR(m.GetEnum("cuda_graphs", {"auto", "true", "false"}, &t->cuda_graphs));
  RETURN_IF_ERROR(m.GetOptional("length_buckets", &t->length_buckets));
  for (size_t i = 0; i < t->length_buckets.size(); ++i) {
    if (t->length_buckets[i] < 1 || (i > 0 && t->length_buckets[i] <= t->length_buckets[i - 1])) {
      return m.Error("length_buckets", "must be ascending lengths >= 1, e.g. [32, 64, 128]");
    }
  }
  RETURN_IF_ERROR(ParseEvalCadence(m, t));
  RETURN_IF_ERROR(
      GetAtLeast(m, "eval_batch_size", 0, ">= 0 (0: chosen for the device)", &t->eval_batch_size));
  RETURN_IF_ERROR(GetAtLeast(m, "log_every_steps", 1, ">= 1", &t->log_every_steps));
  RETURN_IF_ERROR(GetInRange(m, "ddp_bucket_mb", 1, 4096, &t->ddp_bucket_mb));
  RETURN_IF_ERROR(GetAtLeast(m, "ddp_timeout_s", 1, ">= 1", &t->ddp_timeout_s));
  RETURN_IF_ERROR(m.GetEnum("ddp_comm_dtype", {"fp32", "bf16"}, &t->ddp_comm_dtype));
  RETURN_IF_ERROR(m.GetEnum("strategy", {"ddp", "zero1"}, &t->strategy));
  return absl::OkStatus();
}

// train.devices: -1, N >= 1 or a list of distinct GPU ids; with `local_gpus` known, also what
// this machine has.
absl::Status ParseDevices(const ConfigMap& m, int local_gpus, TrainConfig* t) {
  std::string text;
  if (m.Has("devices")) RETURN_IF_ERROR(m.GetYamlText("devices", &text));
  if (absl::StartsWith(text, "[")) {
    RETURN_IF_ERROR(m.Get("devices", &t->gpu_ids));
    if (t->gpu_ids.empty()) {
      return m.Error("devices", "an empty list names no GPU (-1: every local GPU, N: N ranks)");
    }
    for (size_t i = 0; i < t->gpu_ids.size(); ++i) {
      const int64_t id = t->gpu_ids[i];
      if (id < 0) return m.Error("devices", absl::StrCat("GPU ids are >= 0, got ", id));
      for (size_t j = 0; j < i; ++j) {
        if (t->gpu_ids[j] == id) {
          return m.Error("devices", absl::StrCat("GPU ", id, " is listed twice"));
        }
      }
    }
    t->devices = static_cast<int64_t>(t->gpu_ids.size());
  } else {
    RETURN_IF_ERROR(m.GetOptional("devices", &t->devices));
    if (t->devices == 0 || t->devices < -1) {
      return m.Error("devices", absl::StrCat("must be -1 (every local GPU), a number of ranks "
                                             ">= 1 or a list of GPU ids, got ",
                                             t->devices));
    }
  }
  if (local_gpus == kUnknownGpus) return absl::OkStatus();
  if (!t->gpu_ids.empty()) {
    if (local_gpus == 0) {
      return m.Error("devices",
                     "lists GPU ids but this machine has no GPU (N: N ranks on the "
                     "CPU)");
    }
    for (int64_t id : t->gpu_ids) {
      if (id >= local_gpus) {
        return m.Error(
            "devices",
            absl::StrCat("GPU ", id, " is not on this machine (",
                         local_gpus == 1 ? "GPU 0 only" : absl::StrCat("GPUs 0-", local_gpus - 1),
                         ")"));
      }
    }
  } else if (local_gpus > 0 && t->devices > local_gpus) {
    return m.Error("devices", absl::StrCat(t->devices, " ranks, but this machine has ", local_gpus,
                                           local_gpus == 1 ? " GPU" : " GPUs"));
  }
  return absl::OkStatus();
}

absl::Status ParseOutput(const ConfigMap& m, OutputConfig* out) {
  RETURN_IF_ERROR(m.AllowOnly({"dir", "save", "checkpoint", "checkpoint_every_s"}));
  RETURN_IF_ERROR(m.GetOptional("dir", &out->dir));
  if (out->dir.empty()) return m.Error("dir", "must not be empty");
  RETURN_IF_ERROR(m.GetEnum("save", {"best", "last", "none"}, &out->save));
  RETURN_IF_ERROR(m.GetOptional("checkpoint", &out->checkpoint));
  RETURN_IF_ERROR(m.GetOptional("checkpoint_every_s", &out->checkpoint_every_s));
  if (!(out->checkpoint_every_s >= 0)) {
    return m.Error("checkpoint_every_s", absl::StrCat("must be >= 0 (0: at every evaluation), got ",
                                                      out->checkpoint_every_s));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainerConfig> ParseTrainerConfig(const ConfigFile& file, int local_gpus) {
  ASSIGN_OR_RETURN(ConfigMap root, file.Root());
  RETURN_IF_ERROR(root.AllowOnly({"model", "task", "train", "output"}));
  TrainerConfig config;
  config.source = file.name();
  ASSIGN_OR_RETURN(ConfigMap model, root.GetMap("model"));
  RETURN_IF_ERROR(ParseModel(model, &config.model));
  ASSIGN_OR_RETURN(ConfigMap task, root.GetMap("task"));
  RETURN_IF_ERROR(ParseTask(task, &config.task));
  if (task_reader != nullptr) {
    ASSIGN_OR_RETURN(config.task.settings, task_reader->read(task, model, config));
    task_reader->resolve(&config.task);
  }
  ASSIGN_OR_RETURN(ConfigMap train, root.GetOptionalMap("train"));
  RETURN_IF_ERROR(ParseTrain(train, &config.train));
  RETURN_IF_ERROR(ParseDevices(train, local_gpus, &config.train));
  ASSIGN_OR_RETURN(ConfigMap output, root.GetOptionalMap("output"));
  RETURN_IF_ERROR(ParseOutput(output, &config.output));
  return config;
}

absl::StatusOr<TrainerConfig> LoadTrainerConfig(const std::string& path,
                                                const std::vector<std::string>& overrides,
                                                int local_gpus) {
  ASSIGN_OR_RETURN(ConfigFile file, ConfigFile::Load(path));
  RETURN_IF_ERROR(file.ApplyOverrides(overrides));
  return ParseTrainerConfig(file, local_gpus);
}

void SetTaskSectionReader(const TaskSectionReader* reader) { task_reader = reader; }

int64_t LocalRankCount(const TrainConfig& train, int local_gpus) {
  if (train.devices == -1) return local_gpus > 0 ? local_gpus : 1;
  return train.devices;
}

}  // namespace trainer
}  // namespace tunefleet
