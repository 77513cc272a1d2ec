#include "trainer/commands/eval_command.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "trainer/commands/cross_encoder_folder.h"
#include "trainer/data/datasets.h"
#include "trainer/data/prompts.h"
#include "trainer/data/rerank_data.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/data/task_data.h"
#include "trainer/io/metrics_log.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/inference_model.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/reranking_evaluator.h"
#include "trainer/tasks/retrieval_evaluator.h"
#include "trainer/tasks/task_model.h"
#include "trainer/tasks/triplet_evaluator.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer eval";

int Fail(int code, const absl::Status& status) {
  PrintError(kProgram, status);
  return code;
}

// The command line, as given and completed (eval_kind, format).
struct EvalOptions {
  std::string model_dir, task_name = "sts", data, format, pooling_name, device_name = "auto";
  std::string eval_kind, queries, corpus, qrels;
  int64_t batch_size = 64, max_len = 0;
  int files = 0;       // how many of --queries, --corpus and --qrels are given
  std::string prompt;  // prepended to every text of --data
};

// Reads the flags into `o`: -1 to go on, else the exit code (--help, a bad command line).
int ParseEvalFlags(const std::vector<std::string>& args, EvalOptions* o) {
  CommandLine cli(kProgram, "",
                  "Evaluates a model folder on a data file as the task's evaluation says: STS\n"
                  "Spearman / Pearson correlation of cosine similarity (sts), or accuracy (a task\n"
                  "with a head: nli, classification; the folder's head.safetensors); with\n"
                  "--eval_kind retrieval, sentence-transformers' InformationRetrievalEvaluator\n"
                  "metrics of queries against a corpus; with --eval_kind triplet,\n"
                  "TripletEvaluator's accuracy. Prints one JSON line.");
  cli.AddString("model", &o->model_dir, "model directory (required)", "DIR");
  cli.AddString("task", &o->task_name, TaskTypeChoices(), "TASK");
  cli.AddString("data", &o->data, "evaluation data file (required)", "FILE");
  cli.AddString("format", &o->format,
                "stsb | sick | paws | mrpc | jsonl | csv | tsv (default: from the name)", "F");
  cli.AddInt("batch_size", &o->batch_size, "examples per forward pass");
  cli.AddInt("max_len", &o->max_len,
             "maximum tokens (default: the model's max_seq_length, else 128)");
  cli.AddString("pooling", &o->pooling_name, "mean | cls | max (default: the model's, else mean)",
                "MODE");
  cli.AddString("device", &o->device_name, "auto | cpu | cuda", "DEVICE");
  cli.AddString("eval_kind", &o->eval_kind,
                "retrieval: queries against a corpus, eval/ndcg@10 ... (from --data's (anchor, "
                "positive) rows, or --queries, --corpus, --qrels); reranking: a cross-encoder "
                "on --data's {query, positive, negative} rows, eval/map, eval/mrr@10, "
                "eval/ndcg@10; triplet: --data's (anchor, positive, negative) rows, eval/accuracy "
                "(cos(a, p) > cos(a, n)); default: the task's evaluation",
                "KIND");
  cli.AddString("queries", &o->queries, "retrieval: BEIR queries.jsonl (instead of --data)",
                "FILE");
  cli.AddString("corpus", &o->corpus, "retrieval: BEIR corpus.jsonl", "FILE");
  cli.AddString("qrels", &o->qrels, "retrieval: BEIR qrels .tsv", "FILE");
  cli.AddString("prompt", &o->prompt,
                "the task's and triplet evaluation: prepended to every text of --data; pooled "
                "without its tokens when the model's Pooling has include_prompt false",
                "STR");
  return ParseOrExit(cli, args, kProgram);
}

// Checks the flags together and completes `o`: the task they name, or the first error.
absl::StatusOr<TaskPtr> CheckEvalOptions(EvalOptions* o) {
  absl::Status status;
  o->files = !o->queries.empty() + !o->corpus.empty() + !o->qrels.empty();
  if (o->files > 0 && o->eval_kind.empty()) o->eval_kind = "retrieval";
  const bool data_kind = o->eval_kind == "reranking" || o->eval_kind == "triplet";
  if (!o->eval_kind.empty() && o->eval_kind != "retrieval" && !data_kind) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "--eval_kind must be retrieval, reranking or triplet (the others are the task's), got ",
        o->eval_kind));
  } else if (data_kind && o->files != 0) {
    status = absl::InvalidArgumentError(
        absl::StrCat("--eval_kind ", o->eval_kind, " reads --data, not --queries"));
  } else if (o->files != 0 && o->files != 3) {
    status = absl::InvalidArgumentError("--queries, --corpus and --qrels go together");
  } else if (o->files == 3 && !o->data.empty()) {
    status = absl::InvalidArgumentError("give --data or --queries/--corpus/--qrels, not both");
  } else if (o->model_dir.empty() || (o->data.empty() && o->files == 0)) {
    status = absl::InvalidArgumentError(
        "--model and --data (or --queries, --corpus and --qrels) are required");
  }
  absl::StatusOr<TaskPtr> task = MakeTask(o->task_name);
  if (status.ok() && !task.ok()) status = task.status();
  if (status.ok()) status = CheckBatchSizeAndDevice(o->batch_size, o->device_name);
  if (!status.ok()) return status;
  if (o->format.empty()) o->format = GuessFormat(o->data);
  return task;
}

// The model folder's encoder with the pooling and truncation the flags (or the folder) say.
struct EvalModel {
  InferenceModel loaded;
  Pooling pooling = Pooling::kMean;
  int64_t max_len = 0;
};

absl::StatusOr<EvalModel> LoadEvalModel(const EvalOptions& o) {
  absl::StatusOr<InferenceModel> loaded = LoadInferenceModel(o.model_dir);
  if (!loaded.ok()) return loaded.status();
  auto pooling = ParsePooling(PoolingNameOrDefault(o.pooling_name, loaded->info));
  if (!pooling.ok()) return pooling.status();
  const int64_t max_len = MaxLenOrDefault(o.max_len, loaded->info);
  return EvalModel{*std::move(loaded), *pooling, max_len};
}

// The metrics as one JSON line on stdout, `count_key` (examples, queries) counting what was
// evaluated: MetricsLine leads with "step".
void PrintMetrics(int64_t count, const std::map<std::string, double>& metrics,
                  const char* count_key) {
  std::string line = MetricsLine(count, metrics);
  line.replace(line.find("\"step\""), 6, absl::StrCat("\"", count_key, "\""));
  std::printf("%s\n", line.c_str());
}

// --eval_kind retrieval: queries against a corpus, from the BEIR files or --data's pairs.
int RunRetrievalEval(const EvalOptions& o, const TaskPtr& task, const EvalModel& m) {
  absl::StatusOr<RetrievalSet> set;
  if (o.files == 3) {
    set = ReadRetrievalFiles(o.queries, o.corpus, o.qrels);
  } else {
    auto rows = ReadDataset(o.data, o.format);
    set = rows.ok() ? RetrievalFromPairs(*rows, o.data) : rows.status();
  }
  if (!set.ok()) return Fail(kExitUsage, set.status());
  const RetrievalData retrieval = TokenizeRetrieval(*std::move(set), *m.loaded.tokenizer, m.max_len,
                                                    o.files == 3 ? o.qrels : o.data);
  auto target = TargetDevice(o.device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  TaskModel model(m.loaded.bert, m.pooling, task, 2);
  model->to(*target);
  auto metrics = EvaluateRetrieval(model, retrieval, *target, o.batch_size, Precision::kFp32);
  if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
  PrintMetrics(retrieval.size(), *metrics, "queries");
  return kExitOk;
}

// --eval_kind reranking: a cross-encoder folder on --data's queries with their positives and
// negatives (CrossEncoderRerankingEvaluator).
int RunRerankingEval(const EvalOptions& o) {
  absl::StatusOr<CrossEncoderFolder> folder = LoadCrossEncoderFolder(o.model_dir, o.max_len);
  if (!folder.ok()) return Fail(kExitUsage, folder.status());
  absl::StatusOr<std::vector<RerankQuery>> queries = ReadRerankFile(o.data, &std::cerr);
  if (!queries.ok()) return Fail(kExitUsage, queries.status());
  const RerankData data =
      TokenizeRerank(*std::move(queries), *folder->tokenizer, folder->max_len, o.data);
  auto target = TargetDevice(o.device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  folder->model->to(*target);
  auto metrics = EvaluateReranking(folder->model, data, *target, o.batch_size, Precision::kFp32);
  if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
  PrintMetrics(data.size(), *metrics, "queries");
  return kExitOk;
}

// --prompt before every text of `rows`; returns the lengths pooling leaves out of each text
// column (the model's include_prompt false), else none.
std::vector<int64_t> PromptRows(const EvalOptions& o, const EvalModel& m,
                                std::vector<Example>* rows) {
  if (o.prompt.empty() || rows->empty()) return {};
  const std::vector<std::string> prompts((*rows)[0].texts(), o.prompt);
  ApplyPrompts(prompts, rows);
  if (m.loaded.info.include_prompt) return {};
  return PromptLengths(*m.loaded.tokenizer, prompts, m.max_len);
}

// --eval_kind triplet: --data's (anchor, positive, negative) rows (TripletEvaluator).
int RunTripletEval(const EvalOptions& o, const TaskPtr& task, const EvalModel& m) {
  auto rows = ReadDataset(o.data, o.format);
  if (!rows.ok()) return Fail(kExitUsage, rows.status());
  std::vector<int64_t> prompt_lengths = PromptRows(o, m, &*rows);
  auto triplets = MakeTripletData(*std::move(rows), *m.loaded.tokenizer, m.max_len, o.data);
  if (!triplets.ok()) return Fail(kExitUsage, triplets.status());
  triplets->set_prompt_lengths(std::move(prompt_lengths));
  auto target = TargetDevice(o.device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  TaskModel model(m.loaded.bert, m.pooling, task, 2);
  model->set_include_prompt(m.loaded.info.include_prompt);
  model->to(*target);
  auto metrics = EvaluateTriplets(model, *triplets, *target, o.batch_size, Precision::kFp32);
  if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
  PrintMetrics(triplets->size(), *metrics, "examples");
  return kExitOk;
}

// A task with a head: the folder's head.safetensors, whose classifier.weight gives the labels.
absl::StatusOr<SafetensorsContents> ReadHead(const std::string& model_dir, int64_t* num_labels) {
  const std::string head_path = JoinPath(model_dir, "head.safetensors");
  auto head = ReadSafetensors(head_path, SafetensorsReadOptions{true});
  if (!head.ok()) return head.status();
  auto it = head->tensors.find("classifier.weight");
  if (it == head->tensors.end() || it->second.dim() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(head_path, ": no 2-D classifier.weight"));
  }
  *num_labels = it->second.size(0);
  return head;
}

// The task's own evaluation (correlation, accuracy) of --data's rows.
int RunTaskEval(const EvalOptions& o, const TaskPtr& task, const EvalModel& m) {
  auto rows = ReadDataset(o.data, o.format);
  if (!rows.ok()) return Fail(kExitUsage, rows.status());
  std::vector<int64_t> prompt_lengths = PromptRows(o, m, &*rows);
  auto task_data =
      TaskData::Make(task->eval_data(), *rows, o.format, *m.loaded.tokenizer, m.max_len, o.data);
  if (!task_data.ok()) return Fail(kExitUsage, task_data.status());
  task_data->set_prompt_lengths(std::move(prompt_lengths));
  int64_t num_labels = 2;
  SafetensorsContents head;
  if (task->has_head()) {
    auto read = ReadHead(o.model_dir, &num_labels);
    if (!read.ok()) return Fail(kExitUsage, read.status());
    head = std::move(*read);
  }
  TaskModel model(m.loaded.bert, m.pooling, task, num_labels);
  model->set_include_prompt(m.loaded.info.include_prompt);
  if (task->has_head()) {
    absl::Status s = model->LoadHead(head.tensors);
    if (!s.ok()) {
      return Fail(
          kExitUsage,
          absl::Status(s.code(), absl::StrCat(o.model_dir, "/head.safetensors: ", s.message())));
    }
  }
  auto target = TargetDevice(o.device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  model->to(*target);
  auto metrics = Evaluate(model, *task_data, *target, o.batch_size, Precision::kFp32);
  if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
  PrintMetrics(task_data->size(), *metrics, "examples");
  return kExitOk;
}

}  // namespace

std::string GuessFormat(const std::string& path) {
  const std::string name = absl::AsciiStrToLower(BaseName(path));
  if (absl::StrContains(name, "sick")) return "sick";
  if (absl::StartsWith(name, "msr_paraphrase")) return "mrpc";
  if (absl::EndsWith(name, ".csv")) return "stsb";
  if (absl::EndsWith(name, ".jsonl")) return "jsonl";
  return "tsv";
}

int RunEval(const std::vector<std::string>& args) {
  EvalOptions options;
  if (int rc = ParseEvalFlags(args, &options); rc >= 0) return rc;
  absl::StatusOr<TaskPtr> task = CheckEvalOptions(&options);
  if (!task.ok()) return Fail(kExitUsage, task.status());
  if (!options.prompt.empty() &&
      (options.eval_kind == "retrieval" || options.eval_kind == "reranking")) {
    return Fail(kExitUsage, absl::InvalidArgumentError(
                                absl::StrCat("--prompt: not for --eval_kind ", options.eval_kind,
                                             " (only the task's and the triplet evaluation)")));
  }
  if (options.eval_kind == "reranking") return RunRerankingEval(options);
  absl::StatusOr<EvalModel> model = LoadEvalModel(options);
  if (!model.ok()) return Fail(kExitUsage, model.status());
  if (options.eval_kind == "retrieval") return RunRetrievalEval(options, *task, *model);
  if (options.eval_kind == "triplet") return RunTripletEval(options, *task, *model);
  return RunTaskEval(options, *task, *model);
}

}  // namespace trainer
}  // namespace tunefleet
