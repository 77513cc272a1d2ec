// The trainer YAML's schema (trainer/config/train_config.h reads it): the typed config and one
// row per key, its dotted name, member, checks, help, whether it names a file or folder that
// must exist and how the resolved config writes it. Parsing (train_config.h), the key list
// (config_keys.h), `trainer train --dry_run --json`'s "keys" and "files"
// (trainer/commands/train_dry_run.h), the resolved config (trainer/train/resolved_config.h) and
// `trainer train --help` all iterate TrainerConfigFields(): adding a trainer key is one row here
// plus the code that uses its member. A row's type is its member's; its default is the member's
// initializer. Thread-safety: the table is built once, on first use, and immutable after.
#ifndef TUNEFLEET_TRAINER_CONFIG_CONFIG_SCHEMA_H_
#define TUNEFLEET_TRAINER_CONFIG_CONFIG_SCHEMA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace trainer {

// The largest train.batch_size (and searched batch size) accepted: 2^20 examples a rank.
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 20;

// `local_gpus`: the GPUs of the machine that trains, for the checks of train.devices that depend
// on it (a list of GPU ids on a CPU-only machine, an id the machine lacks, more ranks than GPUs);
// kUnknownGpus (hpo checking a sweep's config, a rank under a launcher) skips them.
inline constexpr int kUnknownGpus = -1;

// The section whose keys a task type may add to (TaskSettings, the loss registry), and the one
// whose model.head the task type checks.
inline constexpr char kTaskSection[] = "task";
inline constexpr char kModelSection[] = "model";

struct ModelConfig {
  std::string path;  // Hugging Face model directory
  // bi_encoder: texts encoded apart and pooled into sentence embeddings; cross_encoder: a pair
  // encoded as one text through a sequence classification head, as transformers'
  // *ForSequenceClassification and sentence-transformers' CrossEncoder (the saved model is that
  // layout). task.type may then be left out: the loss names it (bce, ce).
  std::string kind = "bi_encoder";
  // cross_encoder: the head's outputs when model.path is a plain encoder folder (1 for bce); a
  // cross-encoder folder brings its own head, whose size must agree.
  int num_labels = 1;
  std::string pooling = "mean";  // mean | cls | max
  // false: pooling leaves out the tokens of the prompt a text starts with (task.prompts; [CLS]
  // included), as sentence-transformers' Pooling(include_prompt=False); the encoder sees them.
  bool include_prompt = true;
  int max_seq_len = 128;
  double dropout = 0.1;
  // Optional safetensors file with the classifier head's initial weights (classifier.weight,
  // classifier.bias) for nli / classification; empty: a fresh head.
  std::string head;
};

// A task type's own settings (keys beyond the common ones, e.g. contrastive's margin), as its
// entry in the trainer's loss registry (trainer/tasks/all_losses.h) parses them; opaque here.
class TaskSettings {
 public:
  virtual ~TaskSettings() = default;
  // Its keys with their values as YAML text, in its order (the resolved config writes them).
  virtual std::vector<std::pair<std::string, std::string>> Values() const = 0;
};

// One entry of task.datasets (several training sets in one run, as sentence-transformers' trainer
// with a DatasetDict): its keys are the task section's keys of those names, read the same way.
// `type` is inferred from its loss (default: task.loss) and model.kind as for the task section,
// and `loss` and `settings` resolved, by the loss registry (trainer/tasks/loss_registry.h); the
// loss's own keys are the task section's, shared by every dataset.
struct DatasetConfig {
  std::string name;  // its key under task.datasets
  std::string train, format;
  std::vector<std::string> columns;
  std::string label_column;
  std::string type, loss;
  // Its prompts (task.prompts' forms); task.prompts when the entry gives none.
  std::string prompt;
  std::map<std::string, std::string> prompts;
  std::shared_ptr<const TaskSettings> settings;
};

struct TaskConfig {
  // The data kind (trainer/tasks/task_types.h): sts | mnrl | nli | classification | contrastive |
  // cross_encoder; empty: the one task.loss fits (the trainer's loss registry fills it in).
  std::string type;
  // The loss (a loss registry entry, trainer/tasks/all_losses.h): cosine | cosent | angle | mnrl |
  // cached_mnrl | softmax | contrastive; empty: the type's default (sts cosine, mnrl mnrl, nli and
  // classification softmax, contrastive contrastive).
  std::string loss;
  std::string train;   // training data file
  std::string eval;    // evaluation data file; empty: no evaluation (nor eval_queries)
  std::string format;  // stsb | sick | paws | mrpc | tsv | csv | jsonl
  // jsonl, csv and tsv: the text columns, in order (anchor, positive, negatives...); empty:
  // every column but the label columns, in file order. label_column: the column of the score or
  // label; empty: "score" and/or "label", whichever exist.
  std::vector<std::string> columns;
  std::string label_column;
  // How evaluation scores: similarity (eval/spearman), accuracy (eval/accuracy) or retrieval
  // (eval/mrr@10 ...); empty: the type's default. Retrieval reads its queries, corpus and
  // relevant pairs from eval_queries, eval_corpus and eval_qrels (BEIR's layout), or derives them
  // from task.eval's (anchor, positive) rows.
  std::string eval_kind;
  std::string eval_queries, eval_corpus, eval_qrels;
  // Prompts prepended to the texts before tokenization, as sentence-transformers' trainer
  // (`prompts`): `prompt` for every text column, or `prompts` by text column name (task.columns,
  // the file's columns, or sentence1 and sentence2 for the fixed formats; trainer/data/prompts.h);
  // at most one of them set. The YAML's task.prompts is a string (prompt) or a map (prompts).
  std::string prompt;
  std::map<std::string, std::string> prompts;
  // MatryoshkaLoss around an embedding loss: the sum over the dims (embeddings truncated to the
  // first d components) of weight * loss; weights 1 unless given. Empty: no wrapper.
  std::vector<int64_t> matryoshka_dims;
  std::vector<double> matryoshka_weights;
  int num_labels = 0;  // classification / nli: 0 means "from the data"
  // mnrl under data parallelism: every rank's positives are negatives for every anchor (the
  // embeddings are all-gathered with gradients), as with one process and the global batch.
  bool mnrl_gather = true;
  // The type's own settings; null: it has none, or its defaults.
  std::shared_ptr<const TaskSettings> settings;
  // task.datasets, in the YAML's order (then task.train is empty; trainer/config/datasets_key.h);
  // empty: task.train alone. task.eval, eval_kind and the evaluation follow task.type (the first
  // dataset's when the YAML leaves it out) and task.format (the first dataset's by default).
  std::vector<DatasetConfig> datasets;
};

struct TrainConfig {
  int64_t epochs = 1;
  int64_t max_steps = 0;  // > 0: stop after this many optimizer steps
  int64_t batch_size = 32;
  double lr = 2.0e-5;
  double weight_decay = 0.01;
  double warmup_ratio = 0.1;
  std::string schedule = "linear";  // linear | constant
  double max_grad_norm = 1.0;       // 0: no clipping
  int64_t grad_accum = 1;
  std::string precision = "bf16";  // fp32 | bf16 | fp16
  int64_t seed = 42;
  bool shuffle = true;
  // Shuffled epochs only: batches of examples of about the same length, the same padded length
  // on every rank of a step (trainer/data/batch_plan.h), as Hugging Face's group_by_length.
  bool group_by_length = true;
  // How examples are grouped into batches: "default" (shuffled, group_by_length) or
  // "no_duplicates" (no text twice in a batch, per rank: trainer/data/no_duplicates.h); empty:
  // no_duplicates for losses with in-batch negatives (mnrl, cached_mnrl), else default.
  std::string batch_sampler;
  // With task.datasets: which dataset each step's batches come from (trainer/data/
  // multi_dataset_sampler.h), as sentence-transformers' MultiDatasetBatchSamplers:
  // "proportional" (each dataset's batches all once an epoch, in a seeded random mix) or
  // "round_robin" (the datasets in turn, until the smallest runs out).
  std::string multi_dataset_sampler = "proportional";
  bool grad_checkpointing = false;
  // Replay each step as CUDA graphs (trainer/train/step_graphs.h): "auto" on one GPU when the step
  // allows it (bf16 or fp32, no gradient checkpointing), under DDP too; "true" the same;
  // "false" never.
  std::string cuda_graphs = "auto";
  // With CUDA graphs, the lengths batches are padded up to (one graph per length and batch
  // shape; trainer/data/batch_plan.h's GraphBuckets): ascending, >= 1; empty: 16, 32, 64, 128, 256,
  // 512 (up to model.max_seq_len).
  std::vector<int64_t> length_buckets;
  // When to evaluate (trainer/train/train_loop.h, "Evaluation points and their keys"): every this
  // many optimizer steps, every this many samples (across all ranks), or every this fraction
  // of an epoch (2: every other epoch). At most one of the three is > 0; all 0: only at the
  // end. The default of eval_every_steps (100) applies only when the YAML gives none of them
  // > 0 and does not set eval_every_steps itself.
  int64_t eval_every_steps = 100;
  int64_t eval_every_samples = 0;
  double eval_every_epochs = 0;
  // Examples per evaluation batch (inference, no gradients); 0: the larger of batch_size and
  // 64 on the CPU, 256 on a GPU.
  int64_t eval_batch_size = 0;
  int64_t log_every_steps = 10;
  // Data parallelism (WORLD_SIZE > 1): gradient bucket size, and how long a collective (or the
  // rendezvous) may wait for a peer before the trial fails.
  int64_t ddp_bucket_mb = 25;
  int64_t ddp_timeout_s = 300;
  // The dtype gradient buckets are averaged in across ranks (NCCL): "fp32" (the gradients' own),
  // or "bf16": half the bytes, the mean rounded to bf16, as DDP's bf16_compress_hook. Gloo
  // (CPU ranks) always sends the gradients' own dtype.
  std::string ddp_comm_dtype = "fp32";
  // With more than one rank: "ddp" (every rank holds the whole AdamW state) or "zero1" (ZeRO
  // stage 1: the AdamW state sharded across the ranks, trainer/optim/sharded_adamw.h). One process
  // trains the same way under either.
  std::string strategy = "ddp";
  // How many ranks `trainer train` starts itself on this machine when no launcher did
  // (trainer/distributed/local_ranks.h): -1 one per local GPU (one rank on a CPU-only machine), N
  // >= 1 N ranks (N Gloo ranks on a CPU-only machine). A YAML list ([0, 2, 3], or `--gpu_ids
  // 0,2,3`) names the GPUs instead: gpu_ids holds it and devices its length. Ignored under torchrun
  // or an agent (RANK, WORLD_SIZE or TUNEFLEET_AGENT_ENDPOINT set), which start the ranks.
  int64_t devices = 1;
  std::vector<int64_t> gpu_ids;
};

struct OutputConfig {
  std::string dir = "runs/sbert";
  std::string save = "best";  // best | last | none: the model written to OUTPUT_DIR/model
  // Write OUTPUT_DIR/checkpoint (model, head, optimizer, progress) for `trainer train --resume`:
  // at the end, and at an evaluation once checkpoint_every_s seconds have passed since the last
  // one (or the start); 0: at every evaluation. A crash loses at most that much training.
  bool checkpoint = true;
  double checkpoint_every_s = 300;
};

struct TrainerConfig {
  std::string source;  // the file it came from
  ModelConfig model;
  TaskConfig task;
  TrainConfig train;
  OutputConfig output;
};

// Where a row's value lives in a TrainerConfig, and its value (an int member reads as int64_t; a
// map of strings only comes from a row's `value` hook: task.prompts).
using FieldPtr = std::variant<int*, int64_t*, double*, bool*, std::string*, std::vector<int64_t>*,
                              std::vector<double>*, std::vector<std::string>*>;
using FieldValue =
    std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>,
                 std::vector<std::string>, std::map<std::string, std::string>>;

// What a row's value names: nothing, a file or a folder that must exist where the trials run
// (the dry run's "files"), or the output folder; paths are made absolute in the resolved config.
enum class PathKind { kNone, kFile, kFolder, kOutput };
// How the resolved config writes a row: always, only when set (not empty), or null when empty.
enum class Written { kAlways, kWhenSet, kNullWhenEmpty };
// Where an enum's choices come from: the row, or the loss registry (task types, losses).
enum class ChoicesFrom { kRow, kTaskTypes, kTaskLosses };

// What a row's read and check see: its section of the YAML, its key there, the config so far.
struct FieldContext {
  const ConfigMap& section;
  const std::string& name;
  TrainerConfig* config;
  int local_gpus;
};

struct ConfigField {
  std::string key;                     // dotted: "train.lr"
  FieldPtr (*member)(TrainerConfig&);  // where it is read into
  std::string help;                    // one line for `trainer train --help`
  bool required = false;
  std::vector<std::string> choices;  // an enum's values (empty: any value of the type)
  ChoicesFrom choices_from = ChoicesFrom::kRow;
  PathKind path = PathKind::kNone;
  Written written = Written::kAlways;
  std::string if_empty;  // set: a string member read empty is this error
  // A bound checked after the read: value >= lo ("must be REQUIREMENT, got V"), or with
  // `in_range` lo <= value <= hi ("must be in [lo, hi], got V").
  bool bounded = false, in_range = false;
  double lo = 0, hi = 0;
  std::string requirement;
  // Replaces the read by the member's type (GetEnum, Get, GetOptional) when set.
  absl::Status (*read)(const FieldContext&) = nullptr;
  // Checks run after the read and bound, against keys read before this one too.
  absl::Status (*check)(const FieldContext&) = nullptr;
  // Replaces the member's value (what the dry run and the resolved config write) when set.
  FieldValue (*value)(const TrainerConfig&) = nullptr;

  // Builders for the table's rows.
  ConfigField& Required();
  ConfigField& OneOf(std::vector<std::string> values);
  ConfigField& From(ChoicesFrom from);
  ConfigField& Path(PathKind kind);
  ConfigField& Writes(Written how);
  ConfigField& IfEmpty(std::string message);
  ConfigField& AtLeast(double min, std::string text);
  ConfigField& InRange(double min, double max);
  ConfigField& Reads(absl::Status (*fn)(const FieldContext&));
  ConfigField& Checks(absl::Status (*fn)(const FieldContext&));
  ConfigField& ValueFrom(FieldValue (*fn)(const TrainerConfig&));
};

// Every key of the trainer YAML, in the order the parser reads them (and lists them in
// errors), sections in order: model, task, train, output.
const std::vector<ConfigField>& TrainerConfigFields();

// "train.lr" -> "train" and "lr".
std::string SectionOf(const ConfigField& field);
std::string NameOf(const ConfigField& field);

// The row's value in `config` (its `value` hook, else its member's).
FieldValue ValueOf(const ConfigField& field, const TrainerConfig& config);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_CONFIG_SCHEMA_H_
