#include "trainer/config/config_schema.h"

#include <cmath>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "trainer/config/devices_key.h"
#include "trainer/config/prompts_key.h"

namespace tunefleet {
namespace trainer {
namespace {

// A row's member in its section of TrainerConfig.
template <auto M>
FieldPtr Model(TrainerConfig& c) {
  return &(c.model.*M);
}
template <auto M>
FieldPtr Task(TrainerConfig& c) {
  return &(c.task.*M);
}
template <auto M>
FieldPtr Train(TrainerConfig& c) {
  return &(c.train.*M);
}
template <auto M>
FieldPtr Output(TrainerConfig& c) {
  return &(c.output.*M);
}

ConfigField Row(const char* key, FieldPtr (*member)(TrainerConfig&), const char* help) {
  ConfigField f;
  f.key = key;
  f.member = member;
  f.help = help;
  return f;
}

absl::Status CheckDropout(const FieldContext& x) {
  const double d = x.config->model.dropout;
  if (d < 0 || d >= 1) return x.section.Error(x.name, absl::StrCat("must be in [0, 1), got ", d));
  return absl::OkStatus();
}

// task.columns and task.label_column: only for the named formats.
absl::Status CheckNamedFormat(const FieldContext& x) {
  const std::string& format = x.config->task.format;
  if (x.section.Has(x.name) && format != "jsonl" && format != "csv" && format != "tsv") {
    return x.section.Error(
        x.name, absl::StrCat("only applies to task.format jsonl, csv or tsv (not ", format, ")"));
  }
  return absl::OkStatus();
}

// task.label_column, and then task.columns against it.
absl::Status CheckColumns(const FieldContext& x) {
  RETURN_IF_ERROR(CheckNamedFormat(x));
  const TaskConfig& task = x.config->task;
  const ConfigMap& m = x.section;
  for (size_t i = 0; i < task.columns.size(); ++i) {
    const std::string& name = task.columns[i];
    if (name.empty()) return m.Error("columns", "names an empty column");
    if (name == task.label_column) {
      return m.Error("columns", absl::StrCat("\"", name, "\" is task.label_column"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (task.columns[j] == name) {
        return m.Error("columns", absl::StrCat("names \"", name, "\" twice"));
      }
    }
  }
  // One text column only for a text and a teacher's embedding (task type embedding, loss mse).
  const bool one = task.type == "embedding" || (task.type.empty() && task.loss == "mse");
  if (m.Has("columns") && task.columns.size() < (one ? 1u : 2u)) {
    return m.Error("columns",
                   "must name at least 2 text columns (e.g. [anchor, positive]), or 1 "
                   "for task type embedding");
  }
  return absl::OkStatus();
}

// task.eval_queries, eval_corpus and eval_qrels go together, replace task.eval and imply
// eval_kind retrieval.
absl::Status CheckRetrievalFiles(const FieldContext& x) {
  TaskConfig* task = &x.config->task;
  const ConfigMap& m = x.section;
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

const std::vector<std::string>& Formats() {
  static const auto* const kFormats =
      new std::vector<std::string>{"stsb", "sick", "paws", "mrpc", "tsv", "csv", "jsonl"};
  return *kFormats;
}

// task.train and task.format: required, but with task.datasets task.train is absent (each
// dataset names its own file) and task.format optional (then the first dataset's).
absl::Status ReadTrain(const FieldContext& x) {
  const ConfigMap& m = x.section;
  if (m.Has("datasets") && m.Has(x.name)) {
    return m.Error(x.name, "and task.datasets are both given: remove task.train");
  }
  if (m.Has("datasets")) return absl::OkStatus();
  RETURN_IF_ERROR(m.Get(x.name, &x.config->task.train));
  return x.config->task.train.empty() ? m.Error(x.name, "must name a data file") : absl::OkStatus();
}
absl::Status ReadFormat(const FieldContext& x) {
  return x.section.GetEnum(x.name, Formats(), &x.config->task.format, !x.section.Has("datasets"));
}

// task.prompts (trainer/config/prompts_key.h).
absl::Status ReadPrompts(const FieldContext& x) {
  TaskConfig* t = &x.config->task;
  RETURN_IF_ERROR(ReadPromptsKey(x.section, x.name, &t->prompt, &t->prompts));
  const bool apart = x.section.Has("datasets");  // each dataset's columns: checked when read
  return CheckPromptsKey(x.section, x.name, x.config->model.kind, apart ? "jsonl" : t->format,
                         apart ? std::vector<std::string>() : t->columns, t->prompt, t->prompts);
}

// A prompt for every column (a string), or the map (empty: neither).
FieldValue PromptsValue(const TrainerConfig& c) {
  if (!c.task.prompts.empty()) return c.task.prompts;
  return c.task.prompt;
}

// task.eval_kind triplet reads task.eval's (anchor, positive, negative) rows: a column format.
absl::Status CheckTripletEval(const FieldContext& x) {
  return x.config->task.eval_kind == "triplet" ? CheckNamedFormat(x) : absl::OkStatus();
}

absl::Status CheckNumLabels(const FieldContext& x) {
  const int n = x.config->task.num_labels;
  if (n < 0 || n == 1) {
    return x.section.Error(x.name,
                           absl::StrCat("must be 0 (from the data) or at least 2, got ", n));
  }
  return absl::OkStatus();
}

absl::Status CheckMatryoshkaDims(const FieldContext& x) {
  const std::vector<int64_t>& dims = x.config->task.matryoshka_dims;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1) {
      return x.section.Error(x.name, "must be dims >= 1, e.g. [768, 512, 256, 128, 64]");
    }
    for (size_t j = 0; j < i; ++j) {
      if (dims[j] == dims[i]) {
        return x.section.Error(x.name, absl::StrCat("names ", dims[i], " twice"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckMatryoshkaWeights(const FieldContext& x) {
  const TaskConfig& task = x.config->task;
  if (!x.section.Has(x.name)) return absl::OkStatus();
  if (task.matryoshka_weights.size() != task.matryoshka_dims.size()) {
    return x.section.Error(
        x.name, absl::StrCat("has ", task.matryoshka_weights.size(), " weights for ",
                             task.matryoshka_dims.size(), " task.matryoshka_dims (one per dim)"));
  }
  for (double w : task.matryoshka_weights) {
    if (!(w > 0) || !std::isfinite(w)) return x.section.Error(x.name, "must be > 0");
  }
  return absl::OkStatus();
}

absl::Status CheckSomethingToTrain(const FieldContext& x) {
  if (x.config->train.epochs == 0 && x.config->train.max_steps == 0) {
    return x.section.Error("epochs", "epochs and max_steps are both 0: nothing to train");
  }
  return absl::OkStatus();
}

absl::Status CheckBatchSize(const FieldContext& x) {
  const int64_t b = x.config->train.batch_size;
  if (b > kMaxBatchSize) {
    return x.section.Error(x.name,
                           absl::StrCat("must be at most ", kMaxBatchSize, " (2^20), got ", b));
  }
  return absl::OkStatus();
}

absl::Status CheckLr(const FieldContext& x) {
  const double lr = x.config->train.lr;
  if (lr <= 0) return x.section.Error(x.name, absl::StrCat("must be > 0, got ", lr));
  return absl::OkStatus();
}

absl::Status CheckLengthBuckets(const FieldContext& x) {
  const std::vector<int64_t>& b = x.config->train.length_buckets;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i] < 1 || (i > 0 && b[i] <= b[i - 1])) {
      return x.section.Error(x.name, "must be ascending lengths >= 1, e.g. [32, 64, 128]");
    }
  }
  return absl::OkStatus();
}

// eval_every_steps, eval_every_samples, eval_every_epochs: each >= 0, at most one > 0. A YAML
// that sets samples or epochs and says nothing of steps drops the steps default.
absl::Status CheckEvalCadence(const FieldContext& x) {
  TrainConfig* t = &x.config->train;
  if (!(t->eval_every_epochs >= 0) || !std::isfinite(t->eval_every_epochs)) {
    return x.section.Error(x.name,
                           absl::StrCat("must be a finite number >= 0 (0: not by epochs), got ",
                                        t->eval_every_epochs));
  }
  if (!x.section.Has("eval_every_steps") &&
      (t->eval_every_samples > 0 || t->eval_every_epochs > 0)) {
    t->eval_every_steps = 0;
  }
  const char* keys[] = {"eval_every_steps", "eval_every_samples", "eval_every_epochs"};
  const bool on[] = {t->eval_every_steps > 0, t->eval_every_samples > 0, t->eval_every_epochs > 0};
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) {
      if (on[a] && on[b]) {
        return x.section.Error(keys[b], absl::StrCat(keys[a], " and ", keys[b],
                                                     " are both > 0: set at most one of them (the "
                                                     "other to 0)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCheckpointEvery(const FieldContext& x) {
  const double s = x.config->output.checkpoint_every_s;
  if (!(s >= 0)) {
    return x.section.Error(x.name, absl::StrCat("must be >= 0 (0: at every evaluation), got ", s));
  }
  return absl::OkStatus();
}

// train.devices (trainer/config/devices_key.h).
absl::Status ReadDevices(const FieldContext& x) {
  TrainConfig* t = &x.config->train;
  return ReadDevicesKey(x.section, x.local_gpus, &t->devices, &t->gpu_ids);
}

FieldValue DevicesValue(const TrainerConfig& c) {
  if (c.train.gpu_ids.empty()) return c.train.devices;
  return c.train.gpu_ids;
}

std::vector<ConfigField>* ModelAndTaskFields() {
  using M = ModelConfig;
  using T = TaskConfig;
  using P = PathKind;
  return new std::vector<ConfigField>{
      Row("model.path", Model<&M::path>, "the Hugging Face model folder")
          .Required()
          .Path(P::kFolder)
          .IfEmpty("must name a model directory"),
      Row("model.kind", Model<&M::kind>, "bi_encoder, or cross_encoder: the pair as one text")
          .OneOf({"bi_encoder", "cross_encoder"}),
      Row("model.num_labels", Model<&M::num_labels>, "cross_encoder: the new head's outputs")
          .InRange(1, 100000),
      Row("model.pooling", Model<&M::pooling>, "how token embeddings pool")
          .OneOf({"mean", "cls", "max"}),
      Row("model.include_prompt", Model<&M::include_prompt>, "false: pooling skips the prompt"),
      Row("model.max_seq_len", Model<&M::max_seq_len>, "tokens per text, longer ones cut")
          .InRange(2, 8192),
      Row("model.dropout", Model<&M::dropout>, "dropout in the encoder").Checks(CheckDropout),
      Row("model.head", Model<&M::head>,
          "nli, classification: the head's first weights (safetensors)")
          .Path(P::kFile),
      Row("task.type", Task<&T::type>, "the data kind; empty: the one task.loss fits")
          .From(ChoicesFrom::kTaskTypes),
      Row("task.loss", Task<&T::loss>, "the loss; empty: the type's default")
          .From(ChoicesFrom::kTaskLosses)
          .Writes(Written::kWhenSet),
      Row("task.train", Task<&T::train>, "training data file (none with task.datasets)")
          .Required()
          .Path(P::kFile)
          .Reads(ReadTrain),
      Row("task.eval", Task<&T::eval>, "evaluation data file; empty: no evaluation data")
          .Path(P::kFile),
      Row("task.format", Task<&T::format>, "the data files' format")
          .Required()
          .OneOf(Formats())
          .Reads(ReadFormat),
      Row("task.columns", Task<&T::columns>, "jsonl, csv, tsv: the text columns, in order")
          .Writes(Written::kWhenSet)
          .Checks(CheckNamedFormat),
      Row("task.label_column", Task<&T::label_column>, "jsonl, csv, tsv: the score/label column")
          .Writes(Written::kWhenSet)
          .Checks(CheckColumns),
      Row("task.prompts", Task<&T::prompt>, "a prompt for every text, or {column: prompt}")
          .Writes(Written::kWhenSet)
          .Reads(ReadPrompts)
          .ValueFrom(PromptsValue),
      Row("task.eval_kind", Task<&T::eval_kind>, "how evaluation scores (empty: by type)")
          .OneOf({"similarity", "accuracy", "retrieval", "reranking", "triplet"})
          .Writes(Written::kWhenSet)
          .Checks(CheckTripletEval),
      Row("task.eval_queries", Task<&T::eval_queries>, "retrieval: the queries file")
          .Path(P::kFile)
          .Writes(Written::kWhenSet),
      Row("task.eval_corpus", Task<&T::eval_corpus>, "retrieval: the corpus file")
          .Path(P::kFile)
          .Writes(Written::kWhenSet),
      Row("task.eval_qrels", Task<&T::eval_qrels>, "retrieval: the relevant pairs file")
          .Path(P::kFile)
          .Writes(Written::kWhenSet)
          .Checks(CheckRetrievalFiles),
      Row("task.num_labels", Task<&T::num_labels>, "classes; 0: from the data")
          .Checks(CheckNumLabels),
      Row("task.mnrl_gather", Task<&T::mnrl_gather>, "mnrl: every rank's positives negatives"),
      Row("task.matryoshka_dims", Task<&T::matryoshka_dims>, "MatryoshkaLoss's dims; empty: none")
          .Writes(Written::kWhenSet)
          .Checks(CheckMatryoshkaDims),
      Row("task.matryoshka_weights", Task<&T::matryoshka_weights>, "a weight per dim; empty: 1s")
          .Writes(Written::kWhenSet)
          .Checks(CheckMatryoshkaWeights),
  };
}

std::vector<ConfigField>* TrainFields() {
  using T = TrainConfig;
  return new std::vector<ConfigField>{
      Row("train.epochs", Train<&T::epochs>, "passes over the data").AtLeast(0, ">= 0"),
      Row("train.max_steps", Train<&T::max_steps>, "> 0: stop after this many optimizer steps")
          .AtLeast(0, ">= 0")
          .Checks(CheckSomethingToTrain),
      Row("train.batch_size", Train<&T::batch_size>, "examples per step and rank")
          .AtLeast(1, "a positive integer")
          .Checks(CheckBatchSize),
      Row("train.lr", Train<&T::lr>, "AdamW's peak learning rate").Checks(CheckLr),
      Row("train.weight_decay", Train<&T::weight_decay>, "AdamW's decoupled weight decay")
          .AtLeast(0, ">= 0"),
      Row("train.warmup_ratio", Train<&T::warmup_ratio>, "share of the steps warming up")
          .InRange(0, 1),
      Row("train.schedule", Train<&T::schedule>, "the learning rate after warm-up")
          .OneOf({"linear", "constant"}),
      Row("train.max_grad_norm", Train<&T::max_grad_norm>, "gradient clipping; 0: none")
          .AtLeast(0, ">= 0 (0: no clipping)"),
      Row("train.grad_accum", Train<&T::grad_accum>, "batches per optimizer step")
          .AtLeast(1, "a positive integer"),
      Row("train.precision", Train<&T::precision>, "the dtype of the forward and backward")
          .OneOf({"fp32", "bf16", "fp16"}),
      Row("train.seed", Train<&T::seed>, "seeds the weights and the shuffles").AtLeast(0, ">= 0"),
      Row("train.shuffle", Train<&T::shuffle>, "shuffle the examples every epoch"),
      Row("train.group_by_length", Train<&T::group_by_length>, "batches of like lengths"),
      Row("train.batch_sampler", Train<&T::batch_sampler>, "empty: the loss's default")
          .OneOf({"default", "no_duplicates"})
          .Writes(Written::kNullWhenEmpty),
      Row("train.multi_dataset_sampler", Train<&T::multi_dataset_sampler>, "task.datasets' mix")
          .OneOf({"proportional", "round_robin"}),
      Row("train.grad_checkpointing", Train<&T::grad_checkpointing>, "recompute activations"),
      Row("train.cuda_graphs", Train<&T::cuda_graphs>, "replay each step as CUDA graphs")
          .OneOf({"auto", "true", "false"}),
      Row("train.length_buckets", Train<&T::length_buckets>, "CUDA graphs: padded lengths")
          .Checks(CheckLengthBuckets),
      Row("train.eval_every_steps", Train<&T::eval_every_steps>, "evaluate every this many steps")
          .AtLeast(0, ">= 0 (0: only at the end)"),
      Row("train.eval_every_samples", Train<&T::eval_every_samples>, "... or samples")
          .AtLeast(0, ">= 0 (0: not by samples)"),
      Row("train.eval_every_epochs", Train<&T::eval_every_epochs>, "... or epochs")
          .Checks(CheckEvalCadence),
      Row("train.eval_batch_size", Train<&T::eval_batch_size>, "0: chosen for the device")
          .AtLeast(0, ">= 0 (0: chosen for the device)"),
      Row("train.log_every_steps", Train<&T::log_every_steps>, "a metrics line every N steps")
          .AtLeast(1, ">= 1"),
      Row("train.ddp_bucket_mb", Train<&T::ddp_bucket_mb>, "gradient bucket size").InRange(1, 4096),
      Row("train.ddp_timeout_s", Train<&T::ddp_timeout_s>, "how long a collective may wait")
          .AtLeast(1, ">= 1"),
      Row("train.ddp_comm_dtype", Train<&T::ddp_comm_dtype>, "the dtype gradients average in")
          .OneOf({"fp32", "bf16"}),
      Row("train.strategy", Train<&T::strategy>, "zero1: AdamW's state sharded across ranks")
          .OneOf({"ddp", "zero1"}),
      Row("train.devices", Train<&T::devices>, "-1: every local GPU, N ranks, or [GPU ids]")
          .Reads(ReadDevices)
          .ValueFrom(DevicesValue),
  };
}

std::vector<ConfigField>* OutputFields() {
  using O = OutputConfig;
  return new std::vector<ConfigField>{
      Row("output.dir", Output<&O::dir>, "OUTPUT_DIR: metrics, model, checkpoint")
          .Path(PathKind::kOutput)
          .IfEmpty("must not be empty"),
      Row("output.save", Output<&O::save>, "the model written to OUTPUT_DIR/model")
          .OneOf({"best", "last", "none"}),
      Row("output.checkpoint", Output<&O::checkpoint>, "write a checkpoint for --resume"),
      Row("output.checkpoint_every_s", Output<&O::checkpoint_every_s>, "0: at every evaluation")
          .Checks(CheckCheckpointEvery),
  };
}

}  // namespace

ConfigField& ConfigField::Required() {
  required = true;
  return *this;
}
ConfigField& ConfigField::OneOf(std::vector<std::string> values) {
  choices = std::move(values);
  return *this;
}
ConfigField& ConfigField::From(ChoicesFrom from) {
  choices_from = from;
  return *this;
}
ConfigField& ConfigField::Path(PathKind kind) {
  path = kind;
  return *this;
}
ConfigField& ConfigField::Writes(Written how) {
  written = how;
  return *this;
}
ConfigField& ConfigField::IfEmpty(std::string message) {
  if_empty = std::move(message);
  return *this;
}
ConfigField& ConfigField::AtLeast(double min, std::string text) {
  bounded = true;
  lo = min;
  requirement = std::move(text);
  return *this;
}
ConfigField& ConfigField::InRange(double min, double max) {
  bounded = in_range = true;
  lo = min;
  hi = max;
  return *this;
}
ConfigField& ConfigField::Reads(absl::Status (*fn)(const FieldContext&)) {
  read = fn;
  return *this;
}
ConfigField& ConfigField::Checks(absl::Status (*fn)(const FieldContext&)) {
  check = fn;
  return *this;
}
ConfigField& ConfigField::ValueFrom(FieldValue (*fn)(const TrainerConfig&)) {
  value = fn;
  return *this;
}

const std::vector<ConfigField>& TrainerConfigFields() {
  static const std::vector<ConfigField>* const kFields = [] {
    auto* all = ModelAndTaskFields();
    for (auto* part : {TrainFields(), OutputFields()}) {
      all->insert(all->end(), part->begin(), part->end());
      delete part;
    }
    return all;
  }();
  return *kFields;
}

std::string SectionOf(const ConfigField& field) { return field.key.substr(0, field.key.find('.')); }

std::string NameOf(const ConfigField& field) { return field.key.substr(field.key.find('.') + 1); }

FieldValue ValueOf(const ConfigField& field, const TrainerConfig& config) {
  if (field.value != nullptr) return field.value(config);
  // The member is only read: a const config is not written through the pointer.
  return std::visit(
      [](auto* p) -> FieldValue {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int>) {
          return static_cast<int64_t>(*p);
        } else {
          return *p;
        }
      },
      field.member(const_cast<TrainerConfig&>(config)));
}

}  // namespace trainer
}  // namespace tunefleet
