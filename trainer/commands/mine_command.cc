#include "trainer/commands/mine_command.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <numeric>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "nlohmann/json.hpp"
#include "trainer/commands/cross_encoder_folder.h"
#include "trainer/commands/eval_command.h"
#include "trainer/data/datasets.h"
#include "trainer/data/line_reader.h"
#include "trainer/model/inference_model.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/hard_negatives.h"
#include "trainer/tasks/reranking_evaluator.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer mine";

struct MineFlags {
  std::string model_dir, data, output, corpus, cross_encoder, device_name = "auto";
  std::string sampling_strategy = "top", output_format = "triplet";
  int64_t num_negatives = 3, range_min = 0, range_max = -1, batch_size = 32, seed = 0;
  double max_score = NAN, min_score = NAN, absolute_margin = NAN, relative_margin = NAN;
};

int Fail(int code, const absl::Status& status) {
  PrintError(kProgram, status);
  return code;
}

int ParseMineFlags(const std::vector<std::string>& args, MineFlags* f) {
  CommandLine cli(kProgram, "",
                  "Mines hard negatives for (anchor, positive) pairs with a bi-encoder, as\n"
                  "sentence-transformers' util.mine_hard_negatives, and writes the rows as JSONL.");
  cli.AddString("model", &f->model_dir, "bi-encoder directory (required)", "DIR");
  cli.AddString("data", &f->data, "(anchor, positive) rows, any trainer data format", "FILE");
  cli.AddString("output", &f->output, "JSONL file to write (required)", "FILE");
  cli.AddInt("num_negatives", &f->num_negatives, "negatives per (anchor, positive)");
  cli.AddInt("range_min", &f->range_min, "skip the candidates ranked above this");
  cli.AddInt("range_max", &f->range_max, "candidates considered (-1: from the other flags)");
  cli.AddDouble("max_score", &f->max_score, "drop candidates scoring above (default: none)");
  cli.AddDouble("min_score", &f->min_score, "drop candidates scoring below (default: none)");
  cli.AddDouble("absolute_margin", &f->absolute_margin,
                "drop candidates within this of the positive's score (default: none)");
  cli.AddDouble("relative_margin", &f->relative_margin,
                "drop candidates above (1 - this) x the positive's score (default: none)");
  cli.AddString("sampling_strategy", &f->sampling_strategy, "top | random", "S");
  cli.AddString("output_format", &f->output_format,
                "triplet | n-tuple | labeled-pair | labeled-list", "F");
  cli.AddString("corpus", &f->corpus, "more texts, one a line (.jsonl: each \"text\")", "FILE");
  cli.AddString("cross_encoder", &f->cross_encoder,
                "rescore with this cross-encoder when a margin or --max_score is set", "DIR");
  cli.AddInt("batch_size", &f->batch_size, "texts per forward pass");
  cli.AddInt("seed", &f->seed, "--sampling_strategy random's seed");
  cli.AddString("device", &f->device_name, "auto | cpu | cuda", "DEVICE");
  return ParseOrExit(cli, args, kProgram);
}

absl::StatusOr<MiningOptions> CheckMineFlags(const MineFlags& f) {
  if (f.model_dir.empty() || f.data.empty() || f.output.empty()) {
    return absl::InvalidArgumentError("--model, --data and --output are required");
  }
  if (f.sampling_strategy != "top" && f.sampling_strategy != "random") {
    return absl::InvalidArgumentError(
        absl::StrCat("--sampling_strategy must be top or random, got ", f.sampling_strategy));
  }
  for (const char* fmt : {"triplet", "n-tuple", "labeled-pair", "labeled-list"}) {
    if (f.output_format == fmt) break;
    if (std::string(fmt) == "labeled-list") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--output_format must be triplet, n-tuple, labeled-pair or labeled-list, got ",
          f.output_format));
    }
  }
  if (f.num_negatives < 1 || f.range_min < 0 || (f.range_max >= 0 && f.range_max <= f.range_min)) {
    return absl::InvalidArgumentError(
        "--num_negatives must be >= 1, --range_min >= 0 and --range_max above --range_min");
  }
  if (absl::Status s = CheckBatchSizeAndDevice(f.batch_size, f.device_name); !s.ok()) return s;
  MiningOptions o;
  o.num_negatives = f.num_negatives;
  o.range_min = f.range_min;
  o.range_max = f.range_max;
  auto set = [](double v, std::optional<double>* out) {
    if (!std::isnan(v)) *out = v;
  };
  set(f.max_score, &o.max_score);
  set(f.min_score, &o.min_score);
  set(f.absolute_margin, &o.absolute_margin);
  set(f.relative_margin, &o.relative_margin);
  o.sampling_strategy = f.sampling_strategy;
  o.output_format = f.output_format;
  o.seed = static_cast<uint64_t>(f.seed);
  return o;
}

// --corpus's texts: one a line, or a JSONL file's "text" values.
absl::StatusOr<std::vector<std::string>> ReadCorpus(const std::string& path) {
  std::vector<std::string> out;
  if (path.empty()) return out;
  auto lines = ReadLines(path, &std::cerr);
  if (!lines.ok()) return lines.status();
  const bool jsonl = absl::EndsWith(path, ".jsonl");
  for (const Line& line : *lines) {
    if (!jsonl) {
      out.push_back(line.text);
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(line.text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("text") || !j["text"].is_string()) {
      return LineError(path, line.number, "not a JSON object with a string \"text\"");
    }
    out.push_back(j["text"].get<std::string>());
  }
  if (out.empty()) return NoExamples(path, " (corpus texts)");
  return out;
}

// The first two keys of a JSONL file's first object, else "anchor" and "positive".
std::pair<std::string, std::string> ColumnNames(const std::string& path,
                                                const std::string& format) {
  std::pair<std::string, std::string> names = {"anchor", "positive"};
  if (format != "jsonl") return names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) {
  }
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.size() < 2) return names;
  auto it = j.begin();
  names.first = it.key();
  names.second = (++it).key();
  return names;
}

// Normalized sentence embeddings [N, H] of `texts`, float32 on the CPU: batches of like length
// (longest first), padded to their longest, in eval mode without gradients.
absl::StatusOr<torch::Tensor> Embed(InferenceModel& m, Pooling pooling, int64_t max_len,
                                    const std::vector<std::string>& texts, int64_t batch_size,
                                    const torch::Device& device) {
  std::vector<Encoding> encodings;
  for (const std::string& t : texts) encodings.push_back(m.tokenizer->Encode(t, max_len));
  std::vector<int64_t> order(texts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return encodings[a].ids.size() > encodings[b].ids.size();
  });
  torch::NoGradGuard no_grad;
  torch::Tensor out = torch::zeros({static_cast<int64_t>(texts.size()), m.info.config.hidden_size});
  for (size_t b = 0; b < order.size(); b += batch_size) {
    std::vector<Encoding> batch;
    std::vector<int64_t> rows;
    for (size_t r = b; r < std::min(order.size(), b + batch_size); ++r) {
      batch.push_back(encodings[order[r]]);
      rows.push_back(order[r]);
    }
    const TextBatch t = PadTexts(batch, m.tokenizer->pad_id()).To(device);
    absl::StatusOr<BertOutput> o =
        BertForward(m.bert, t.input_ids, t.token_type_ids, t.attention_mask);
    if (!o.ok()) return o.status();
    const torch::Tensor pooled =
        Pool(o->last_hidden_state.to(torch::kFloat), t.attention_mask, pooling);
    out.index_copy_(0, torch::tensor(rows, torch::kLong), pooled.cpu());
  }
  return out / out.norm(2, 1, true).clamp_min(1e-12);
}

absl::Status WriteRows(const std::string& path, const MinedRows& rows) {
  std::string text;
  for (const std::vector<MinedValue>& row : rows.rows) {
    nlohmann::ordered_json j;
    for (size_t c = 0; c < rows.columns.size(); ++c) {
      const MinedValue& v = row[c];
      switch (v.kind) {
        case MinedValue::Kind::kText:
          j[rows.columns[c]] = v.text;
          break;
        case MinedValue::Kind::kTexts:
          j[rows.columns[c]] = v.texts;
          break;
        case MinedValue::Kind::kLabels:
          j[rows.columns[c]] = v.labels;
          break;
        case MinedValue::Kind::kLabel:
          j[rows.columns[c]] = v.label;
          break;
      }
    }
    absl::StrAppend(&text, j.dump(), "\n");
  }
  return WriteFileAtomically(path, text);
}

}  // namespace

int RunMine(const std::vector<std::string>& args) {
  MineFlags f;
  if (int rc = ParseMineFlags(args, &f); rc >= 0) return rc;
  absl::StatusOr<MiningOptions> options = CheckMineFlags(f);
  if (!options.ok()) return Fail(kExitUsage, options.status());
  const std::string format = GuessFormat(f.data);
  auto rows = ReadDataset(f.data, format);
  if (!rows.ok()) return Fail(kExitUsage, rows.status());
  std::vector<std::string> anchors, positives;
  for (const Example& e : *rows) {
    anchors.push_back(e.a);
    positives.push_back(e.b);
  }
  auto corpus = ReadCorpus(f.corpus);
  if (!corpus.ok()) return Fail(kExitUsage, corpus.status());
  auto plan = PlanMining(anchors, positives, *corpus, *options);
  if (!plan.ok()) return Fail(kExitUsage, plan.status());
  auto model = LoadInferenceModel(f.model_dir);
  if (!model.ok()) return Fail(kExitUsage, model.status());
  auto pooling = ParsePooling(PoolingNameOrDefault("", model->info));
  if (!pooling.ok()) return Fail(kExitUsage, pooling.status());
  auto device = TargetDevice(f.device_name, /*local_rank=*/-1);
  if (!device.ok()) return Fail(kExitUsage, device.status());
  model->bert->to(*device);
  model->bert->eval();
  const int64_t max_len = MaxLenOrDefault(0, model->info);
  auto q = Embed(*model, *pooling, max_len, plan->queries, f.batch_size, *device);
  auto c = q.ok() ? Embed(*model, *pooling, max_len, plan->corpus, f.batch_size, *device) : q;
  if (!c.ok()) return Fail(kExitFailure, c.status());
  PairScorer rescore;
  std::optional<CrossEncoderFolder> cross;
  if (!f.cross_encoder.empty()) {
    auto loaded = LoadCrossEncoderFolder(f.cross_encoder, 0);
    if (!loaded.ok()) return Fail(kExitUsage, loaded.status());
    cross = *std::move(loaded);
    cross->model->to(*device);
    rescore = [&](const std::vector<std::pair<std::string, std::string>>& pairs) {
      std::vector<Encoding> enc;
      for (const auto& [a, b] : pairs)
        enc.push_back(cross->tokenizer->EncodePair(a, b, cross->max_len));
      return PredictPairs(cross->model, enc, cross->tokenizer->pad_id(), *device, f.batch_size,
                          Precision::kFp32);
    };
  }
  const auto [anchor_column, positive_column] = ColumnNames(f.data, format);
  auto mined = MineHardNegatives(*plan, *options, *q, *c, rescore, anchor_column, positive_column);
  if (!mined.ok()) return Fail(kExitUsage, mined.status());
  if (absl::Status s = WriteRows(f.output, *mined); !s.ok()) return Fail(kExitFailure, s);
  std::cerr << "mined " << mined->rows.size() << " " << options->output_format << " rows for "
            << plan->queries.size() << " queries (" << anchors.size() << " pairs) from a corpus of "
            << plan->corpus.size() << " texts, range_max " << plan->range_max << ": " << f.output
            << "\n";
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
