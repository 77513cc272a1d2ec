#include "trainer/commands/eval_command.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "trainer/data/datasets.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/data/task_data.h"
#include "trainer/io/metrics_log.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/inference_model.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/evaluator.h"
#include "trainer/tasks/loss_registry.h"
#include "trainer/tasks/retrieval_evaluator.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer eval";

int Fail(int code, const absl::Status& status) {
  PrintError(kProgram, status);
  return code;
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
  std::string model_dir, task_name = "sts", data, format, pooling_name, device_name = "auto";
  std::string eval_kind, queries, corpus, qrels;
  int64_t batch_size = 64, max_len = 0;
  CommandLine cli(kProgram, "",
                  "Evaluates a model folder on a data file as the task's evaluation says: STS\n"
                  "Spearman / Pearson correlation of cosine similarity (sts), or accuracy (a task\n"
                  "with a head: nli, classification; the folder's head.safetensors); with\n"
                  "--eval_kind retrieval, sentence-transformers' InformationRetrievalEvaluator\n"
                  "metrics of queries against a corpus. Prints one JSON line.");
  cli.AddString("model", &model_dir, "model directory (required)", "DIR");
  cli.AddString("task", &task_name, TaskTypeChoices(), "TASK");
  cli.AddString("data", &data, "evaluation data file (required)", "FILE");
  cli.AddString("format", &format,
                "stsb | sick | paws | mrpc | jsonl | csv | tsv (default: from the name)", "F");
  cli.AddInt("batch_size", &batch_size, "examples per forward pass");
  cli.AddInt("max_len", &max_len, "maximum tokens (default: the model's max_seq_length, else 128)");
  cli.AddString("pooling", &pooling_name, "mean | cls | max (default: the model's, else mean)",
                "MODE");
  cli.AddString("device", &device_name, "auto | cpu | cuda", "DEVICE");
  cli.AddString("eval_kind", &eval_kind,
                "retrieval: queries against a corpus, eval/ndcg@10 ... (from --data's (anchor, "
                "positive) rows, or --queries, --corpus, --qrels); default: the task's evaluation",
                "KIND");
  cli.AddString("queries", &queries, "retrieval: BEIR queries.jsonl (instead of --data)", "FILE");
  cli.AddString("corpus", &corpus, "retrieval: BEIR corpus.jsonl", "FILE");
  cli.AddString("qrels", &qrels, "retrieval: BEIR qrels .tsv", "FILE");
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  absl::Status status;
  const int files = !queries.empty() + !corpus.empty() + !qrels.empty();
  if (files > 0 && eval_kind.empty()) eval_kind = "retrieval";
  if (!eval_kind.empty() && eval_kind != "retrieval") {
    status = absl::InvalidArgumentError(
        absl::StrCat("--eval_kind must be retrieval (the others are the task's), got ", eval_kind));
  } else if (files != 0 && files != 3) {
    status = absl::InvalidArgumentError("--queries, --corpus and --qrels go together");
  } else if (files == 3 && !data.empty()) {
    status = absl::InvalidArgumentError("give --data or --queries/--corpus/--qrels, not both");
  } else if (model_dir.empty() || (data.empty() && files == 0)) {
    status = absl::InvalidArgumentError(
        "--model and --data (or --queries, --corpus and --qrels) are required");
  }
  absl::StatusOr<TaskPtr> task = MakeTask(task_name);
  if (status.ok() && !task.ok()) status = task.status();
  if (status.ok()) status = CheckBatchSizeAndDevice(batch_size, device_name);
  if (!status.ok()) return Fail(kExitUsage, status);
  if (format.empty()) format = GuessFormat(data);

  absl::StatusOr<InferenceModel> loaded = LoadInferenceModel(model_dir);
  if (!loaded.ok()) return Fail(kExitUsage, loaded.status());
  auto pooling = ParsePooling(PoolingNameOrDefault(pooling_name, loaded->info));
  if (!pooling.ok()) return Fail(kExitUsage, pooling.status());
  max_len = MaxLenOrDefault(max_len, loaded->info);

  if (eval_kind == "retrieval") {
    absl::StatusOr<RetrievalSet> set;
    if (files == 3) {
      set = ReadRetrievalFiles(queries, corpus, qrels);
    } else {
      auto rows = ReadDataset(data, format);
      set = rows.ok() ? RetrievalFromPairs(*rows, data) : rows.status();
    }
    if (!set.ok()) return Fail(kExitUsage, set.status());
    const RetrievalData retrieval =
        TokenizeRetrieval(*std::move(set), *loaded->tokenizer, max_len, files == 3 ? qrels : data);
    auto target = TargetDevice(device_name, /*local_rank=*/-1);
    if (!target.ok()) return Fail(kExitUsage, target.status());
    TaskModel model(loaded->bert, *pooling, *task, 2);
    model->to(*target);
    auto metrics = EvaluateRetrieval(model, retrieval, *target, batch_size, Precision::kFp32);
    if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
    std::string line = MetricsLine(retrieval.size(), *metrics);
    line.replace(line.find("\"step\""), 6, "\"queries\"");
    std::printf("%s\n", line.c_str());
    return kExitOk;
  }

  auto rows = ReadDataset(data, format);
  if (!rows.ok()) return Fail(kExitUsage, rows.status());
  auto task_data =
      TaskData::Make((*task)->eval_data(), *rows, format, *loaded->tokenizer, max_len, data);
  if (!task_data.ok()) return Fail(kExitUsage, task_data.status());

  int64_t num_labels = 2;
  SafetensorsContents head;
  if ((*task)->has_head()) {
    const std::string head_path = JoinPath(model_dir, "head.safetensors");
    auto read = ReadSafetensors(head_path, SafetensorsReadOptions{true});
    if (!read.ok()) return Fail(kExitUsage, read.status());
    head = std::move(*read);
    auto it = head.tensors.find("classifier.weight");
    if (it == head.tensors.end() || it->second.dim() != 2) {
      return Fail(kExitUsage, absl::InvalidArgumentError(
                                  absl::StrCat(head_path, ": no 2-D classifier.weight")));
    }
    num_labels = it->second.size(0);
  }
  TaskModel model(loaded->bert, *pooling, *task, num_labels);
  if ((*task)->has_head()) {
    absl::Status s = model->LoadHead(head.tensors);
    if (!s.ok())
      return Fail(
          kExitUsage,
          absl::Status(s.code(), absl::StrCat(model_dir, "/head.safetensors: ", s.message())));
  }
  auto target = TargetDevice(device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  model->to(*target);
  auto metrics = Evaluate(model, *task_data, *target, batch_size, Precision::kFp32);
  if (!metrics.ok()) return Fail(kExitFailure, metrics.status());
  std::string line = MetricsLine(task_data->size(), *metrics);
  // MetricsLine leads with "step"; here the count is of examples.
  line.replace(line.find("\"step\""), 6, "\"examples\"");
  std::printf("%s\n", line.c_str());
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
