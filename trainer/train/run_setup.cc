#include "trainer/train/run_setup.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/data/datasets.h"
#include "trainer/data/prompts.h"
#include "trainer/data/rerank_data.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/checkpoint_cache.h"
#include "trainer/model/classifier_heads.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/model_family_registry.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/triplet_evaluator.h"

namespace tunefleet {
namespace trainer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// `s` with its message prefixed by `where: `.
absl::Status In(const std::string& where, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
}

// A model folder's encoder with the config's dropout, in train mode on the CPU.
absl::StatusOr<BertModel> LoadEncoder(const TrainerConfig& config,
                                      std::map<std::string, torch::Tensor>* head) {
  // From the warm worker's host copy when it holds this folder unchanged (the same tensors).
  ASSIGN_OR_RETURN(BertCheckpoint checkpoint, LoadBertCheckpointCached(config.model.path));
  if (config.model.kind == "cross_encoder") {
    if (FamilyOf(checkpoint.config).classifier_head() == ClassifierHead::kNone) {
      return absl::InvalidArgumentError(absl::StrCat(
          config.source, ": model.kind: cross_encoder: ", config.model.path, " is model_type ",
          FamilyOf(checkpoint.config).model_type(), ", which has no sequence classification head"));
    }
    *head = checkpoint.head;
  }
  BertConfig bert = checkpoint.config;
  bert.hidden_dropout_prob = config.model.dropout;
  bert.attention_probs_dropout_prob = config.model.dropout;
  BertModel model(bert, checkpoint.has_pooler, /*init_weights=*/false);  // all loaded below
  if (!checkpoint.has_pooler) {
    for (auto it = checkpoint.tensors.begin(); it != checkpoint.tensors.end();) {
      it = absl::StartsWith(it->first, "pooler.") ? checkpoint.tensors.erase(it) : std::next(it);
    }
  }
  absl::Status s = LoadBertWeights(model, std::move(checkpoint.tensors));
  if (!s.ok()) return In(config.model.path, s);
  return model;
}

// The head's width for a cross-encoder: model.num_labels for task type cross_encoder, the
// folder's own head when model.path is a cross-encoder (which must agree with the data and
// model.num_labels); `num_labels` (from the data and task.num_labels) otherwise.
absl::StatusOr<int64_t> CrossEncoderLabels(const TrainerConfig& c,
                                           const std::map<std::string, torch::Tensor>& folder_head,
                                           int64_t num_labels) {
  if (c.model.kind != "cross_encoder") return num_labels;
  const bool scores = absl::StartsWith(c.task.type, "cross_encoder");  // one output a pair
  if (scores) num_labels = c.model.num_labels;
  const int64_t own = ClassifierHeadLabels(folder_head);
  if (own == 0) return num_labels;
  if (scores ? own != num_labels : own < num_labels) {
    return absl::InvalidArgumentError(
        absl::StrCat(c.source, ": ", c.model.path, "'s head has ", own, " output(s), but ",
                     scores ? absl::StrCat("model.num_labels is ", num_labels)
                            : absl::StrCat("the data has ", num_labels, " labels")));
  }
  return own;
}

// With no evaluation point during training (train.eval_every_steps, eval_every_samples and
// eval_every_epochs all 0: only the end would evaluate), evaluation data is optional: a task.eval
// or retrieval file that is missing or empty is a warning, and the run trains without
// evaluation (true). A file that is there is read as usual.
bool SkipMissingEvalData(const TrainerConfig& c, std::ostream* warnings) {
  const TrainConfig& t = c.train;
  if (t.eval_every_steps > 0 || t.eval_every_samples > 0 || t.eval_every_epochs > 0) return false;
  for (const std::string* path :
       {&c.task.eval, &c.task.eval_queries, &c.task.eval_corpus, &c.task.eval_qrels}) {
    if (path->empty() || IsDir(*path)) continue;
    absl::StatusOr<uint64_t> size = FileSize(*path);
    if (size.ok() && *size > 0) continue;
    if (warnings != nullptr) {
      *warnings << "warning: evaluation data " << *path
                << (size.ok() ? " is empty" : ": no such file")
                << ": training without evaluation (it would only evaluate at the end)\n";
    }
    return true;
  }
  return false;
}

// The prompts of `t` (task.prompts, or a dataset's) on `rows`, read from `path`: each text
// prefixed with its column's prompt (trainer/data/prompts.h). Returns the lengths pooling leaves
// out of each text column's texts with model.include_prompt false (else none). `check`: a prompt
// for a column that `path` lacks is an error (the training file; an evaluation file may have
// fewer columns).
absl::StatusOr<std::vector<int64_t>> PromptRows(const TrainerConfig& c, const TaskConfig& t,
                                                const std::string& path, const Tokenizer& tokenizer,
                                                int64_t max_len, bool check,
                                                std::vector<Example>* rows) {
  const Prompts prompts{t.prompt, t.prompts};
  if (prompts.empty()) return std::vector<int64_t>();
  ASSIGN_OR_RETURN(std::vector<std::string> columns,
                   TextColumnNames(path, t.format, ColumnOptions{t.columns, t.label_column}));
  if (check) RETURN_IF_ERROR(CheckPromptColumns(prompts, columns, c.source, path));
  const std::vector<std::string> column_prompts = ColumnPrompts(prompts, columns);
  ApplyPrompts(column_prompts, rows);
  if (c.model.include_prompt) return std::vector<int64_t>();
  return PromptLengths(tokenizer, column_prompts, max_len);
}

// The training set of `t` (task.train's, or a dataset's as DatasetTask makes it) for `task`.
absl::StatusOr<TrainSet> ReadTrainSet(const TrainerConfig& c, const TaskConfig& t, TaskPtr task,
                                      const Tokenizer& tokenizer, int64_t max_len,
                                      std::ostream* warnings) {
  ASSIGN_OR_RETURN(
      std::vector<Example> rows,
      ReadDataset(t.train, t.format, ColumnOptions{t.columns, t.label_column}, warnings));
  ASSIGN_OR_RETURN(std::vector<int64_t> prompt_lengths,
                   PromptRows(c, t, t.train, tokenizer, max_len, true, &rows));
  ASSIGN_OR_RETURN(TaskData data,
                   TaskData::Make(task->train_data(), rows, t.format, tokenizer, max_len, t.train));
  data.set_prompt_lengths(std::move(prompt_lengths));
  TrainSet set;
  set.task = std::move(task);
  set.data = std::make_unique<TaskData>(std::move(data));
  return set;
}

// Each training set: task.train's with the run's task, or each of task.datasets with its own.
absl::Status ReadTrainSets(const TrainerConfig& c, const Tokenizer& tokenizer,
                           std::ostream* warnings, RunParts& parts) {
  if (c.task.datasets.empty()) {
    ASSIGN_OR_RETURN(TrainSet set,
                     ReadTrainSet(c, c.task, parts.task, tokenizer, parts.max_len, warnings));
    parts.datasets.push_back(std::move(set));
    return absl::OkStatus();
  }
  for (const DatasetConfig& d : c.task.datasets) {
    const TaskConfig t = DatasetTask(c.task, d);
    absl::StatusOr<TaskPtr> task = MakeTask(t);
    if (!task.ok()) return In(absl::StrCat(c.source, ": task.datasets.", d.name), task.status());
    ASSIGN_OR_RETURN(TrainSet set,
                     ReadTrainSet(c, t, *std::move(task), tokenizer, parts.max_len, warnings));
    set.name = d.name;
    parts.datasets.push_back(std::move(set));
  }
  return absl::OkStatus();
}

// Reads and tokenizes the training sets and, with task.eval, the evaluation set (each as the
// task's data kinds say) into `parts`. task.eval_kind retrieval: the evaluation set is a
// retrieval set, from task.eval_queries, eval_corpus and eval_qrels when given, else from
// task.eval's (anchor, positive[, negatives]) rows (trainer/data/retrieval_data.h). reranking:
// task.eval's queries with their documents (trainer/data/rerank_data.h). triplet: task.eval's
// (anchor, positive, negative) rows (trainer/tasks/triplet_evaluator.h). task.prompts apply to
// the training rows and to task.eval's rows of the pair and triplet evaluations, not to a
// retrieval or reranking set.
absl::Status ReadData(const TrainerConfig& c, const Tokenizer& tokenizer, int rank,
                      RunParts& parts) {
  std::ostream* const warnings = rank == 0 ? &std::cerr : nullptr;
  const ColumnOptions columns{c.task.columns, c.task.label_column};
  RETURN_IF_ERROR(ReadTrainSets(c, tokenizer, warnings, parts));
  if (SkipMissingEvalData(c, warnings)) return absl::OkStatus();
  if (c.task.eval_kind == "reranking") {  // task.eval's JSONL queries, whatever task.format
    if (c.task.eval.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<RerankQuery> queries, ReadRerankFile(c.task.eval, warnings));
    parts.eval = std::make_unique<EvalSet>();
    parts.eval->reranking = std::make_unique<RerankData>(
        TokenizeRerank(std::move(queries), tokenizer, parts.max_len, c.task.eval));
    return absl::OkStatus();
  }
  if (c.task.eval_kind == "retrieval") {
    RetrievalSet set;
    std::string source = c.task.eval;
    if (!c.task.eval_queries.empty()) {
      ASSIGN_OR_RETURN(set, ReadRetrievalFiles(c.task.eval_queries, c.task.eval_corpus,
                                               c.task.eval_qrels, warnings));
      source = c.task.eval_qrels;
    } else if (!c.task.eval.empty()) {
      ASSIGN_OR_RETURN(std::vector<Example> rows,
                       ReadDataset(c.task.eval, c.task.format, columns, warnings));
      ASSIGN_OR_RETURN(set, RetrievalFromPairs(rows, c.task.eval));
    } else {
      return absl::OkStatus();
    }
    parts.eval = std::make_unique<EvalSet>();
    parts.eval->retrieval = std::make_unique<RetrievalData>(
        TokenizeRetrieval(std::move(set), tokenizer, parts.max_len, source));
    return absl::OkStatus();
  }
  if (c.task.eval.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<Example> eval_rows,
                   ReadDataset(c.task.eval, c.task.format, columns, warnings));
  ASSIGN_OR_RETURN(std::vector<int64_t> eval_prompts,
                   PromptRows(c, c.task, c.task.eval, tokenizer, parts.max_len, false, &eval_rows));
  if (c.task.eval_kind == "triplet") {
    ASSIGN_OR_RETURN(TaskData triplets,
                     MakeTripletData(std::move(eval_rows), tokenizer, parts.max_len, c.task.eval));
    triplets.set_prompt_lengths(std::move(eval_prompts));
    parts.eval = std::make_unique<EvalSet>();
    parts.eval->triplets = std::make_unique<TaskData>(std::move(triplets));
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(TaskData eval, TaskData::Make(parts.task->eval_data(), eval_rows, c.task.format,
                                                 tokenizer, parts.max_len, c.task.eval));
  eval.set_prompt_lengths(std::move(eval_prompts));
  parts.eval = std::make_unique<EvalSet>();
  parts.eval->pairs = std::make_unique<TaskData>(std::move(eval));
  return absl::OkStatus();
}

// Several datasets share one model: every loss has a head (a cross-encoder's) or none does.
absl::Status CheckDatasetHeads(const TrainerConfig& c, const RunParts& parts) {
  const TrainSet& first = parts.datasets.front();
  for (const TrainSet& set : parts.datasets) {
    if (set.task->has_head() == first.task->has_head()) continue;
    const TrainSet& with = set.task->has_head() ? set : first;
    const TrainSet& without = set.task->has_head() ? first : set;
    return absl::InvalidArgumentError(absl::StrCat(
        c.source, ": task.datasets: ", with.name, "'s loss ", with.task->loss(),
        " trains a classifier head and ", without.name, "'s loss ", without.task->loss(),
        " none: the datasets of a run share one model, so all their losses or none take a head"));
  }
  return absl::OkStatus();
}

// The head's width: 2 at least, the data's labels, task.num_labels, a cross-encoder's own head.
absl::StatusOr<int64_t> NumLabels(const TrainerConfig& c, const RunParts& parts,
                                  const std::map<std::string, torch::Tensor>& folder_head) {
  int64_t num_labels = 2;
  for (const TrainSet& set : parts.datasets) {
    num_labels = std::max(num_labels, set.data->num_labels());
  }
  if (parts.eval != nullptr) num_labels = std::max(num_labels, parts.eval->num_labels());
  if (c.task.num_labels > 0) {
    if (num_labels > c.task.num_labels && parts.task->has_head()) {
      return absl::InvalidArgumentError(absl::StrCat(c.source, ": task.num_labels is ",
                                                     c.task.num_labels, " but the data has label ",
                                                     num_labels - 1));
    }
    num_labels = c.task.num_labels;
  }
  return CrossEncoderLabels(c, folder_head, num_labels);
}

// What each dataset's loss needs beside the model (gist: its guide, task.guide_model), once per
// loss (their settings are the task section's, shared).
absl::Status PrepareLosses(const TrainerConfig& c, const Tokenizer& tokenizer, RunParts& parts) {
  std::vector<std::string> prepared;
  for (const TrainSet& set : parts.datasets) {
    const std::string& loss = set.task->loss();
    if (std::find(prepared.begin(), prepared.end(), loss) != prepared.end()) continue;
    prepared.push_back(loss);
    if (absl::Status s = set.task->PrepareModel(*parts.model, tokenizer, parts.max_len); !s.ok()) {
      return In(c.source, s);
    }
  }
  return absl::OkStatus();
}

// The steps of an epoch and of the run, the evaluation schedule and the learning rate's.
absl::Status SetSteps(const TrainerConfig& c, int world, RunParts& parts) {
  std::vector<int64_t> sizes;
  for (const TrainSet& set : parts.datasets) sizes.push_back(set.data->size());
  parts.shape = ShapeEpoch(sizes, c.train.batch_size, c.train.grad_accum, world,
                           ParseMultiDatasetSampler(c.train.multi_dataset_sampler));
  parts.steps_per_epoch = parts.shape.steps_per_epoch;
  parts.total_steps =
      c.train.max_steps > 0 ? c.train.max_steps : c.train.epochs * parts.steps_per_epoch;
  // One dataset: its size; several: the samples of an epoch (a multiple of world).
  const int64_t size = sizes.size() == 1 ? sizes[0] : parts.shape.samples;
  absl::StatusOr<EvalSchedule> evals = EvalSchedule::Make(c.train, size, world);
  if (!evals.ok()) return In(c.source, absl::InvalidArgumentError(evals.status().message()));
  parts.eval_schedule = *std::move(evals);
  parts.schedule = std::make_unique<LrSchedule>(c.train.schedule, c.train.lr, c.train.warmup_ratio,
                                                parts.total_steps);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RunParts> BuildRunParts(const TrainerConfig& c, const torch::Device& device,
                                       int rank, int world) {
  RunParts parts;
  ASSIGN_OR_RETURN(parts.precision, ParsePrecision(c.train.precision));
  absl::StatusOr<TaskPtr> task = MakeTask(c.task);
  if (!task.ok()) return In(c.source, task.status());
  parts.task = *std::move(task);
  if (!PrecisionSupported(device.type(), parts.precision)) {
    return absl::InvalidArgumentError(absl::StrCat(c.source, ": train.precision ",
                                                   c.train.precision, " needs a GPU (on ",
                                                   device.str(), " use bf16 or fp32)"));
  }
  auto phase = Clock::now();
  ASSIGN_OR_RETURN(std::shared_ptr<const Tokenizer> tokenizer, LoadFolderTokenizer(c.model.path));
  std::map<std::string, torch::Tensor> folder_head;  // a cross-encoder folder's own head
  ASSIGN_OR_RETURN(BertModel encoder, LoadEncoder(c, &folder_head));
  parts.model_seconds = SecondsSince(phase);
  for (int64_t d : c.task.matryoshka_dims) {  // checked once here, not at each step
    if (d > encoder->config().hidden_size) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.source, ": task.matryoshka_dims: ", d, " is larger than the embeddings of ",
          c.model.path, " (hidden size ", encoder->config().hidden_size, ")"));
    }
  }
  phase = Clock::now();
  parts.max_len = std::min<int64_t>(c.model.max_seq_len, MaxSequenceLength(encoder->config()));
  RETURN_IF_ERROR(ReadData(c, *tokenizer, rank, parts));
  parts.data_seconds = SecondsSince(phase);
  RETURN_IF_ERROR(CheckDatasetHeads(c, parts));
  ASSIGN_OR_RETURN(const int64_t num_labels, NumLabels(c, parts, folder_head));
  ASSIGN_OR_RETURN(Pooling pooling, ParsePooling(c.model.pooling));
  // A cross-encoder's pooler is its family head's to use (BERT's; RoBERTa's and the others' not).
  const bool head_pooler = ClassifierHeadUsesPooler(FamilyOf(encoder->config()).classifier_head());
  for (const TrainSet& set : parts.datasets) {
    if (set.task->uses_pooler() && (head_pooler || !set.task->family_head()) &&
        !encoder->has_pooler()) {
      return absl::InvalidArgumentError(absl::StrCat(
          c.model.path, ": has no pooler weights, which task type ", set.task->type(), " needs"));
    }
  }

  torch::manual_seed(static_cast<uint64_t>(c.train.seed));
  encoder->set_gradient_checkpointing(c.train.grad_checkpointing);
  parts.model = TaskModel(encoder, pooling, parts.datasets.front().task, num_labels);
  parts.model->set_include_prompt(c.model.include_prompt);
  if (!c.model.head.empty()) {
    ASSIGN_OR_RETURN(SafetensorsContents head,
                     ReadSafetensors(c.model.head, SafetensorsReadOptions{true}));
    absl::Status s = parts.model->LoadHead(head.tensors);
    if (!s.ok()) return In(c.model.head, s);
  } else if (!folder_head.empty()) {
    absl::Status s = parts.model->LoadHead(folder_head);
    if (!s.ok()) return In(c.model.path, s);
  }
  RETURN_IF_ERROR(PrepareLosses(c, *tokenizer, parts));
  RETURN_IF_ERROR(SetSteps(c, world, parts));
  return parts;
}

std::string RunFingerprint(const TrainerConfig& c, int world, int64_t total_steps,
                           bool no_duplicates) {
  std::string data;
  if (c.task.datasets.empty()) {
    const absl::StatusOr<uint64_t> size = FileSize(c.task.train);
    data = absl::StrCat(c.task.type, " ", c.task.train, " (", size.ok() ? *size : 0, " bytes, ",
                        c.task.format, ")");
  } else {
    for (const DatasetConfig& d : c.task.datasets) {
      const absl::StatusOr<uint64_t> size = FileSize(d.train);
      absl::StrAppend(&data, data.empty() ? "" : ", ", d.name, ": ", d.loss, " ", d.train, " (",
                      size.ok() ? *size : 0, " bytes, ", d.format, ")");
    }
    absl::StrAppend(&data, ", ", c.train.multi_dataset_sampler);
  }
  return absl::StrCat(data, ", batch ", c.train.batch_size, " x grad_accum ", c.train.grad_accum,
                      world > 1 ? absl::StrCat(" x ", world, " ranks") : "", ", ", total_steps,
                      " steps, seed ", c.train.seed, c.train.shuffle ? ", shuffled" : ", in order",
                      no_duplicates ? ", no duplicates in a batch" : "");
}

absl::StatusOr<TrainStateFiles> LoadResumeState(const TrainerConfig& c,
                                                const std::string& fingerprint, TaskModel& model) {
  ASSIGN_OR_RETURN(TrainStateFiles resumed, LoadTrainState(c.output.dir));
  if (resumed.progress.fingerprint != fingerprint) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot resume from ", c.output.dir, "/checkpoint: it was made for ",
                     resumed.progress.fingerprint, "; this run is ", fingerprint));
  }
  absl::Status s = LoadBertWeights(model->bert(), resumed.encoder);
  if (s.ok() && !resumed.head.empty()) s = model->LoadHead(resumed.head);
  if (!s.ok()) return In(c.output.dir + "/checkpoint", s);
  return resumed;
}

}  // namespace trainer
}  // namespace tunefleet
