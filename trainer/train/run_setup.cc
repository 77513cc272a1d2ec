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
#include "trainer/data/rerank_data.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/checkpoint_cache.h"
#include "trainer/model/hf_model_folder.h"
#include "trainer/model/model_family_registry.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/loss_registry.h"

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
    if (FamilyOf(checkpoint.config).classifier_architecture().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(config.source, ": model.kind: cross_encoder: ", config.model.path,
                       " is model_type ", FamilyOf(checkpoint.config).model_type(),
                       ", and tunefleet builds cross-encoders of model_type bert only so far"));
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
  const bool scores = c.task.type == "cross_encoder";
  if (scores) num_labels = c.model.num_labels;
  const auto bias = folder_head.find("classifier.bias");
  if (bias == folder_head.end()) return num_labels;
  const int64_t own = bias->second.numel();
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

// Reads and tokenizes the training set and, with task.eval, the evaluation set (each as the
// task's data kinds say) into `parts`. task.eval_kind retrieval: the evaluation set is a
// retrieval set, from task.eval_queries, eval_corpus and eval_qrels when given, else from
// task.eval's (anchor, positive[, negatives]) rows (trainer/data/retrieval_data.h). reranking:
// task.eval's queries with their documents (trainer/data/rerank_data.h).
absl::Status ReadData(const TrainerConfig& c, const Tokenizer& tokenizer, int rank,
                      RunParts& parts) {
  std::ostream* const warnings = rank == 0 ? &std::cerr : nullptr;
  const ColumnOptions columns{c.task.columns, c.task.label_column};
  ASSIGN_OR_RETURN(std::vector<Example> train_rows,
                   ReadDataset(c.task.train, c.task.format, columns, warnings));
  ASSIGN_OR_RETURN(TaskData train,
                   TaskData::Make(parts.task->train_data(), train_rows, c.task.format, tokenizer,
                                  parts.max_len, c.task.train));
  parts.train = std::make_unique<TaskData>(std::move(train));
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
  ASSIGN_OR_RETURN(TaskData eval, TaskData::Make(parts.task->eval_data(), eval_rows, c.task.format,
                                                 tokenizer, parts.max_len, c.task.eval));
  parts.eval = std::make_unique<EvalSet>();
  parts.eval->pairs = std::make_unique<TaskData>(std::move(eval));
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
  int64_t num_labels = std::max<int64_t>(parts.train->num_labels(), 2);
  if (parts.eval != nullptr) num_labels = std::max(num_labels, parts.eval->num_labels());
  if (c.task.num_labels > 0) {
    if (num_labels > c.task.num_labels && parts.task->has_head()) {
      return absl::InvalidArgumentError(absl::StrCat(c.source, ": task.num_labels is ",
                                                     c.task.num_labels, " but the data has label ",
                                                     num_labels - 1));
    }
    num_labels = c.task.num_labels;
  }
  ASSIGN_OR_RETURN(num_labels, CrossEncoderLabels(c, folder_head, num_labels));
  ASSIGN_OR_RETURN(Pooling pooling, ParsePooling(c.model.pooling));
  if (parts.task->uses_pooler() && !encoder->has_pooler()) {
    return absl::InvalidArgumentError(absl::StrCat(
        c.model.path, ": has no pooler weights, which task type ", parts.task->type(), " needs"));
  }

  torch::manual_seed(static_cast<uint64_t>(c.train.seed));
  encoder->set_gradient_checkpointing(c.train.grad_checkpointing);
  parts.model = TaskModel(encoder, pooling, parts.task, num_labels);
  if (!c.model.head.empty()) {
    ASSIGN_OR_RETURN(SafetensorsContents head,
                     ReadSafetensors(c.model.head, SafetensorsReadOptions{true}));
    absl::Status s = parts.model->LoadHead(head.tensors);
    if (!s.ok()) return In(c.model.head, s);
  } else if (!folder_head.empty()) {
    absl::Status s = parts.model->LoadHead(folder_head);
    if (!s.ok()) return In(c.model.path, s);
  }

  const int64_t shard = (parts.train->size() + world - 1) / world;  // per rank and epoch
  parts.batches_per_epoch = (shard + c.train.batch_size - 1) / c.train.batch_size;
  parts.steps_per_epoch = (parts.batches_per_epoch + c.train.grad_accum - 1) / c.train.grad_accum;
  parts.total_steps =
      c.train.max_steps > 0 ? c.train.max_steps : c.train.epochs * parts.steps_per_epoch;
  absl::StatusOr<EvalSchedule> evals = EvalSchedule::Make(c.train, parts.train->size(), world);
  if (!evals.ok()) return In(c.source, absl::InvalidArgumentError(evals.status().message()));
  parts.eval_schedule = *std::move(evals);
  parts.schedule = std::make_unique<LrSchedule>(c.train.schedule, c.train.lr, c.train.warmup_ratio,
                                                parts.total_steps);
  return parts;
}

std::string RunFingerprint(const TrainerConfig& c, int world, int64_t total_steps,
                           bool no_duplicates) {
  const absl::StatusOr<uint64_t> size = FileSize(c.task.train);
  return absl::StrCat(c.task.type, " ", c.task.train, " (", size.ok() ? *size : 0, " bytes, ",
                      c.task.format, "), batch ", c.train.batch_size, " x grad_accum ",
                      c.train.grad_accum, world > 1 ? absl::StrCat(" x ", world, " ranks") : "",
                      ", ", total_steps, " steps, seed ", c.train.seed,
                      c.train.shuffle ? ", shuffled" : ", in order",
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
