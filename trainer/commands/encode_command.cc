#include "trainer/commands/encode_command.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "comm/process_group.h"
#include "common/cli.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "trainer/data/tokenizer.h"
#include "trainer/data/utf8_check.h"
#include "trainer/device.h"
#include "trainer/model/autocast.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/inference_model.h"
#include "trainer/model/pooling.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kProgram[] = "trainer encode";
constexpr int64_t kBatchesPerChunk = 64;  // sentences sorted by length within a chunk

int Fail(int code, const absl::Status& status) {
  PrintError(kProgram, status);
  return code;
}

// numpy's format 1.0: magic, version, header length, a dict padded to a multiple of 64 bytes.
std::string NpyHeader(int64_t rows, int64_t cols) {
  std::string dict =
      absl::StrCat("{'descr': '<f4', 'fortran_order': False, 'shape': (", rows, ", ", cols, "), }");
  dict.append((64 - (10 + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  return out + dict;
}

// {"embedding": [...]} with the shortest text that reads back as the same float.
void AppendJsonLine(const float* v, int64_t n, std::string* out) {
  out->append("{\"embedding\": [");
  char buf[32];
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out->append(", ");
    if (!std::isfinite(v[i])) {
      out->append("null");
      continue;
    }
    const auto r = std::to_chars(buf, buf + sizeof(buf), v[i]);
    out->append(buf, r.ptr);
  }
  out->append("]}\n");
}

}  // namespace

int RunEncode(const std::vector<std::string>& args) {
  std::string model_dir, input, output, pooling_name, device_name = "auto", precision_name = "fp32";
  int64_t batch_size = 32, max_len = 0;
  CommandLine cli(kProgram, "",
                  "Encodes one sentence a line of --input with the model's pooling; writes one\n"
                  "JSON object {\"embedding\": [...]} a line, in input order (.npy when --output\n"
                  "ends in .npy).");
  cli.AddString("model", &model_dir, "Hugging Face model directory with vocab.txt (required)",
                "DIR");
  cli.AddString("input", &input, "text file, one sentence a line (required)", "FILE");
  cli.AddString("output", &output, "output file: JSON lines, or .npy (required)", "FILE");
  cli.AddInt("batch_size", &batch_size, "sentences per forward pass");
  cli.AddInt("max_len", &max_len,
             "maximum tokens with [CLS]/[SEP] (default: the model's max_seq_length, else 128)");
  cli.AddString("pooling", &pooling_name,
                "mean | cls | max (default: the model's sentence-transformers pooling, else mean)",
                "MODE");
  cli.AddString("device", &device_name, "auto | cpu | cuda", "DEVICE");
  cli.AddString("precision", &precision_name, "fp32 | bf16 (autocast)", "P");
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  absl::Status status;
  for (const auto& [flag, value] : {std::pair<const char*, std::string*>{"model", &model_dir},
                                    {"input", &input},
                                    {"output", &output}}) {
    if (status.ok() && value->empty()) {
      status = absl::InvalidArgumentError(absl::StrCat("--", flag, " is required"));
    }
  }
  if (status.ok()) status = CheckBatchSizeAndDevice(batch_size, device_name);
  if (status.ok() && max_len != 0 && max_len < 2) {
    status = absl::InvalidArgumentError("--max_len must be >= 2");
  }
  absl::StatusOr<Precision> precision = ParsePrecision(precision_name);
  if (status.ok() && (!precision.ok() || *precision == Precision::kFp16)) {
    status = absl::InvalidArgumentError("--precision must be fp32 or bf16");
  }
  auto env = comm::DistEnv::FromEnvironment();
  if (status.ok() && !env.ok()) status = env.status();
  if (!status.ok()) return Fail(kExitUsage, status);

  std::ifstream in(input, std::ios::binary);
  if (!in) {
    return Fail(kExitUsage, ErrnoStatus(errno, absl::StrCat(input, ": cannot open")));
  }
  std::vector<std::string> lines;
  Utf8LineChecker utf8(input);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    utf8.Check(static_cast<int64_t>(lines.size()) + 1, &line);
    lines.push_back(std::move(line));
  }
  if (in.bad()) return Fail(kExitUsage, absl::DataLossError(absl::StrCat(input, ": read failed")));
  // Every rank reads the input; one warning for it is enough.
  utf8.Report(env->rank == 0 ? &std::cerr : nullptr);

  absl::StatusOr<InferenceModel> loaded = LoadInferenceModel(model_dir);
  if (!loaded.ok()) return Fail(kExitUsage, loaded.status());
  BertModel& model = loaded->bert;
  const BertCheckpoint& info = loaded->info;
  const Tokenizer& tokenizer = *loaded->tokenizer;
  auto pooling = ParsePooling(PoolingNameOrDefault(pooling_name, info));
  if (!pooling.ok()) {
    return Fail(kExitUsage, cli.WasSet("pooling") ? pooling.status()
                                                  : absl::UnimplementedError(absl::StrCat(
                                                        model_dir, ": the model's pooling ",
                                                        pooling.status().message())));
  }
  max_len = MaxLenOrDefault(max_len, info);

  auto selected = TargetDevice(device_name, env->distributed() ? env->local_rank : -1);
  if (!selected.ok()) return Fail(kExitUsage, selected.status());
  const torch::Device target = *selected;
  // Under a torchrun-style launcher the ranks share the work: each encodes its part of every
  // chunk of the input, rank 0 gathers the parts and writes them in input order.
  std::unique_ptr<comm::ProcessGroup> group;
  if (env->distributed()) {
    MakeCurrent(target);
    auto connected = comm::ProcessGroup::Connect(
        *env,
        target.is_cuda() ? comm::ProcessGroup::Backend::kNccl : comm::ProcessGroup::Backend::kGloo,
        std::chrono::seconds(300));
    if (!connected.ok()) {
      return Fail(kExitFailure, absl::Status(connected.status().code(),
                                             absl::StrCat("rank ", env->rank, ": ",
                                                          connected.status().message())));
    }
    group = std::move(*connected);
  }
  const int world = group ? group->size() : 1, rank = group ? group->rank() : 0;

  const bool npy = absl::EndsWith(output, ".npy");
  // Rank 0 writes the output through a temporary file renamed into place at the end.
  AtomicFile out(output);
  if (rank == 0) {
    if (absl::Status s = out.Open(); !s.ok()) return Fail(kExitUsage, s);
  }
  const int64_t n = static_cast<int64_t>(lines.size());
  const int64_t hidden = info.config.hidden_size;
  if (rank == 0 && npy) {
    const std::string header = NpyHeader(n, hidden);
    if (absl::Status s = out.Append(header.data(), header.size()); !s.ok()) {
      return Fail(kExitFailure, s);
    }
  }

  const auto start = std::chrono::steady_clock::now();
  try {
    torch::NoGradGuard no_grad;
    model->to(target);
    std::string text;
    const int64_t chunk = batch_size * kBatchesPerChunk;
    for (int64_t begin = 0; begin < n; begin += chunk) {
      // Every rank cuts the chunk into the same length-sorted batches that one process would,
      // and computes every world_size-th of them: the same arithmetic, whatever the ranks.
      const int64_t size = std::min(chunk, n - begin);
      std::vector<Encoding> encodings(size);
      for (int64_t i = 0; i < size; ++i) encodings[i] = tokenizer.Encode(lines[begin + i], max_len);
      std::vector<int64_t> order(size);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return encodings[a].ids.size() > encodings[b].ids.size();
      });
      torch::Tensor embeddings = torch::zeros({size, hidden}, torch::kFloat32);
      for (int64_t b = rank * batch_size; b < size; b += batch_size * world) {
        const int64_t rows = std::min(batch_size, size - b);
        std::vector<Encoding> batch;
        for (int64_t r = 0; r < rows; ++r) batch.push_back(encodings[order[b + r]]);
        PaddedBatch padded = PadBatch(batch, tokenizer.pad_id());
        auto tensor = [&](std::vector<int64_t>& v) {
          return torch::from_blob(v.data(), {padded.rows, padded.cols}, torch::kLong).clone();
        };
        const torch::Tensor mask = tensor(padded.attention_mask);
        absl::StatusOr<BertOutput> result;
        {
          AutocastScope autocast(target.type(), *precision);
          result =
              BertForward(model, tensor(padded.input_ids), tensor(padded.token_type_ids), mask);
        }
        if (!result.ok()) return Fail(kExitFailure, result.status());
        torch::Tensor pooled =
            Pool(result->last_hidden_state.to(torch::kFloat), mask.to(target), *pooling);
        if (info.normalize) pooled = pooled / pooled.norm(2, 1, true).clamp_min(1e-12);
        const torch::Tensor rows_index = torch::tensor(
            std::vector<int64_t>(order.begin() + b, order.begin() + b + rows), torch::kLong);
        embeddings.index_copy_(0, rows_index, pooled.to(torch::kCPU, torch::kFloat32));
      }
      if (group != nullptr) {
        // Each row was computed by one rank and is zero elsewhere: the sum is the chunk.
        torch::Tensor all = group->backend() == comm::ProcessGroup::Backend::kNccl
                                ? embeddings.to(target)
                                : embeddings;
        if (absl::Status s = group->AllReduceSum(all); !s.ok()) {
          return Fail(kExitFailure,
                      absl::Status(s.code(), absl::StrCat("rank ", rank, ": ", s.message())));
        }
        embeddings = all.to(torch::kCPU).contiguous();
      }
      if (rank != 0) continue;
      const float* data = embeddings.data_ptr<float>();
      absl::Status written;
      if (npy) {
        written = out.Append(reinterpret_cast<const char*>(data), size * hidden * sizeof(float));
      } else {
        text.clear();
        for (int64_t i = 0; i < size; ++i) AppendJsonLine(data + i * hidden, hidden, &text);
        written = out.Append(text.data(), text.size());
      }
      if (!written.ok()) return Fail(kExitFailure, written);
    }
  } catch (const c10::Error& e) {
    return Fail(kExitFailure,
                absl::InternalError(absl::StrCat("encoding failed: ", e.what_without_backtrace())));
  }
  if (group != nullptr) {  // every rank ends the group together: no NCCL warning at exit
    if (absl::Status s = group->Shutdown(); !s.ok()) {
      return Fail(kExitFailure,
                  absl::Status(s.code(), absl::StrCat("rank ", rank, ": ", s.message())));
    }
  }
  if (rank != 0) return kExitOk;
  if (absl::Status s = out.Commit(); !s.ok()) return Fail(kExitFailure, s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TF_LOG(INFO) << "encoded " << n << " sentences (pooling " << PoolingName(*pooling)
               << (info.normalize ? ", normalized" : "") << ", max_len " << max_len << ") on "
               << target.str()
               << (world > 1 ? absl::StrCat(" and ", world - 1, " more rank(s)") : "") << " in "
               << seconds << " s into " << output;
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
