#include "trainer/commands/predict_command.h"

#include <cstdio>
#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/cli.h"
#include "trainer/commands/cross_encoder_folder.h"
#include "trainer/data/utf8_check.h"
#include "trainer/model/inference_model.h"
#include "trainer/tasks/reranking_evaluator.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer predict";

struct PredictOptions {
  std::string model_dir, device_name = "auto";
  int64_t batch_size = 32, max_len = 0;
};

int Fail(int code, const absl::Status& status) {
  PrintError(kProgram, status);
  return code;
}

int ParsePredictFlags(const std::vector<std::string>& args, PredictOptions* o) {
  CommandLine cli(kProgram, "",
                  "Scores text pairs with a cross-encoder folder (transformers'\n"
                  "*ForSequenceClassification, as `trainer train` saves model.kind: cross_encoder\n"
                  "and sentence-transformers' CrossEncoder): one pair a line on stdin, the texts\n"
                  "separated by a tab; one JSON line a pair on stdout, {\"score\": x} (sigmoid of\n"
                  "the logit) or {\"scores\": [...]} for a head of several outputs.");
  cli.AddString("model", &o->model_dir, "cross-encoder directory (required)", "DIR");
  cli.AddInt("batch_size", &o->batch_size, "pairs per forward pass");
  cli.AddInt("max_len", &o->max_len, "maximum tokens a pair (default: the model's limit)");
  cli.AddString("device", &o->device_name, "auto | cpu | cuda", "DEVICE");
  return ParseOrExit(cli, args, kProgram);
}

// stdin's pairs, encoded; errors name the line.
absl::StatusOr<std::vector<Encoding>> ReadPairs(const CrossEncoderFolder& folder) {
  std::vector<Encoding> pairs;
  Utf8LineChecker utf8("stdin");
  int64_t number = 0;
  for (std::string line; std::getline(std::cin, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    utf8.Check(number, &line);
    const std::vector<std::string> texts = absl::StrSplit(line, '\t');
    if (texts.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("stdin:", number, ": expected two texts separated by one tab, got ",
                       texts.size(), " field(s)"));
    }
    pairs.push_back(folder.tokenizer->EncodePair(texts[0], texts[1], folder.max_len));
  }
  if (std::cin.bad()) return absl::DataLossError("stdin: read failed");
  utf8.Report(&std::cerr);
  return pairs;
}

void PrintScores(const torch::Tensor& scores) {
  const torch::Tensor s = scores.contiguous();
  const float* p = s.data_ptr<float>();
  const int64_t n = s.size(0), k = s.dim() == 1 ? 1 : s.size(1);
  for (int64_t i = 0; i < n; ++i) {
    if (s.dim() == 1) {
      std::printf("{\"score\": %.9g}\n", p[i]);
      continue;
    }
    std::string line = "{\"scores\": [";
    for (int64_t j = 0; j < k; ++j)
      absl::StrAppend(&line, j ? ", " : "", absl::StrFormat("%.9g", p[i * k + j]));
    std::printf("%s]}\n", line.c_str());
  }
}

}  // namespace

int RunPredict(const std::vector<std::string>& args) {
  PredictOptions o;
  if (int rc = ParsePredictFlags(args, &o); rc >= 0) return rc;
  absl::Status status = CheckBatchSizeAndDevice(o.batch_size, o.device_name);
  if (status.ok() && o.model_dir.empty())
    status = absl::InvalidArgumentError("--model is required");
  if (!status.ok()) return Fail(kExitUsage, status);
  absl::StatusOr<CrossEncoderFolder> folder = LoadCrossEncoderFolder(o.model_dir, o.max_len);
  if (!folder.ok()) return Fail(kExitUsage, folder.status());
  absl::StatusOr<std::vector<Encoding>> pairs = ReadPairs(*folder);
  if (!pairs.ok()) return Fail(kExitUsage, pairs.status());
  absl::StatusOr<torch::Device> target = TargetDevice(o.device_name, /*local_rank=*/-1);
  if (!target.ok()) return Fail(kExitUsage, target.status());
  folder->model->to(*target);
  absl::StatusOr<torch::Tensor> scores = PredictPairs(
      folder->model, *pairs, folder->tokenizer->pad_id(), *target, o.batch_size, Precision::kFp32);
  if (!scores.ok()) return Fail(kExitFailure, scores.status());
  PrintScores(*scores);
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
