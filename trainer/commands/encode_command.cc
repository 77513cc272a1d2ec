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
#include "trainer/data/prompts.h"
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

// The command line, as given and checked.
struct EncodeOptions {
  std::string model_dir, input, output, pooling_name, device_name = "auto", precision_name = "fp32";
  std::string prompt;  // prepended to every line
  int64_t batch_size = 32, max_len = 0;
  bool pooling_set = false;  // --pooling given (else the model's pooling, or mean)
  Precision precision = Precision::kFp32;
};

// Reads the flags into `o`: -1 to go on, else the exit code (--help, a bad command line).
int ParseEncodeFlags(const std::vector<std::string>& args, EncodeOptions* o) {
  CommandLine cli(kProgram, "",
                  "Encodes one sentence a line of --input with the model's pooling; writes one\n"
                  "JSON object {\"embedding\": [...]} a line, in input order (.npy when --output\n"
                  "ends in .npy).");
  cli.AddString("model", &o->model_dir, "Hugging Face model directory with vocab.txt (required)",
                "DIR");
  cli.AddString("input", &o->input, "text file, one sentence a line (required)", "FILE");
  cli.AddString("output", &o->output, "output file: JSON lines, or .npy (required)", "FILE");
  cli.AddInt("batch_size", &o->batch_size, "sentences per forward pass");
  cli.AddInt("max_len", &o->max_len,
             "maximum tokens with [CLS]/[SEP] (default: the model's max_seq_length, else 128)");
  cli.AddString("pooling", &o->pooling_name,
                "mean | cls | max (default: the model's sentence-transformers pooling, else mean)",
                "MODE");
  cli.AddString("device", &o->device_name, "auto | cpu | cuda", "DEVICE");
  cli.AddString("precision", &o->precision_name, "fp32 | bf16 (autocast)", "P");
  cli.AddString("prompt", &o->prompt,
                "prepended to every sentence (e.g. \"query: \"); pooled without its tokens when "
                "the model's Pooling has include_prompt false",
                "STR");
  if (int rc = ParseOrExit(cli, args, kProgram); rc >= 0) return rc;
  o->pooling_set = cli.WasSet("pooling");
  return -1;
}

// The flags' values: the first error, in the flags' order; sets o->precision.
absl::Status CheckEncodeOptions(EncodeOptions* o) {
  absl::Status status;
  for (const auto& [flag, value] :
       {std::pair<const char*, const std::string*>{"model", &o->model_dir},
        {"input", &o->input},
        {"output", &o->output}}) {
    if (status.ok() && value->empty()) {
      status = absl::InvalidArgumentError(absl::StrCat("--", flag, " is required"));
    }
  }
  if (status.ok()) status = CheckBatchSizeAndDevice(o->batch_size, o->device_name);
  if (status.ok() && o->max_len != 0 && o->max_len < 2) {
    status = absl::InvalidArgumentError("--max_len must be >= 2");
  }
  absl::StatusOr<Precision> precision = ParsePrecision(o->precision_name);
  if (status.ok() && (!precision.ok() || *precision == Precision::kFp16)) {
    status = absl::InvalidArgumentError("--precision must be fp32 or bf16");
  }
  if (precision.ok()) o->precision = *precision;
  return status;
}

// --input's lines (a final '\r' dropped), invalid UTF-8 replaced; its warning goes to `warnings`
// (none where null).
absl::StatusOr<std::vector<std::string>> ReadInputLines(const std::string& input,
                                                        std::ostream* warnings) {
  std::ifstream in(input, std::ios::binary);
  if (!in) return ErrnoStatus(errno, absl::StrCat(input, ": cannot open"));
  std::vector<std::string> lines;
  Utf8LineChecker utf8(input);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    utf8.Check(static_cast<int64_t>(lines.size()) + 1, &line);
    lines.push_back(std::move(line));
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(input, ": read failed"));
  utf8.Report(warnings);
  return lines;
}

// `status` with "rank N: " before its message.
absl::Status OnRank(int rank, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("rank ", rank, ": ", status.message()));
}

// Under a torchrun-style launcher the ranks share the work: each encodes its part of every chunk
// of the input, rank 0 gathers the parts and writes them in input order. Null for one process.
absl::StatusOr<std::unique_ptr<comm::ProcessGroup>> ConnectRanks(const comm::DistEnv& env,
                                                                 const torch::Device& target) {
  if (!env.distributed()) return std::unique_ptr<comm::ProcessGroup>();
  MakeCurrent(target);
  auto connected = comm::ProcessGroup::Connect(
      env,
      target.is_cuda() ? comm::ProcessGroup::Backend::kNccl : comm::ProcessGroup::Backend::kGloo,
      std::chrono::seconds(300));
  if (!connected.ok()) return OnRank(env.rank, connected.status());
  return std::move(*connected);
}

// What this process encodes with: the model on its device, and the ranks it shares the work with.
struct Encoder {
  BertModel model{nullptr};
  const Tokenizer* tokenizer = nullptr;
  Pooling pooling = Pooling::kMean;
  bool normalize = false;
  int64_t max_len = 0, batch_size = 0, hidden = 0;
  std::string prompt;         // --prompt
  int64_t prompt_length = 0;  // the tokens pooling leaves out (include_prompt false), else 0
  torch::Device target = torch::kCPU;
  Precision precision = Precision::kFp32;
  comm::ProcessGroup* group = nullptr;  // null for one process
  int world = 1, rank = 0;
};

// One batch's pooled (and, as the model says, normalized) embeddings, float32 on the CPU.
absl::StatusOr<torch::Tensor> EncodeBatch(const Encoder& e, const std::vector<Encoding>& batch) {
  PaddedBatch padded = PadBatch(batch, e.tokenizer->pad_id());
  auto tensor = [&](std::vector<int64_t>& v) {
    return torch::from_blob(v.data(), {padded.rows, padded.cols}, torch::kLong).clone();
  };
  const torch::Tensor mask = tensor(padded.attention_mask);
  absl::StatusOr<BertOutput> result;
  {
    AutocastScope autocast(e.target.type(), e.precision);
    BertModel model = e.model;
    result = BertForward(model, tensor(padded.input_ids), tensor(padded.token_type_ids), mask);
  }
  if (!result.ok()) return result.status();
  torch::Tensor pooled = Pool(result->last_hidden_state.to(torch::kFloat),
                              MaskPrompt(mask, e.prompt_length).to(e.target), e.pooling);
  if (e.normalize) pooled = pooled / pooled.norm(2, 1, true).clamp_min(1e-12);
  return pooled.to(torch::kCPU, torch::kFloat32);
}

// The embeddings of lines [begin, begin + size), in input order, float32 on the CPU (on rank 0;
// the other ranks' copies are the same). Every rank cuts the chunk into the same length-sorted
// batches that one process would, and computes every world-th of them: the same arithmetic,
// whatever the ranks.
absl::StatusOr<torch::Tensor> EncodeChunk(const Encoder& e, const std::vector<std::string>& lines,
                                          int64_t begin, int64_t size) {
  std::vector<Encoding> encodings(size);
  for (int64_t i = 0; i < size; ++i) {
    encodings[i] = e.tokenizer->Encode(e.prompt + lines[begin + i], e.max_len);
  }
  std::vector<int64_t> order(size);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return encodings[a].ids.size() > encodings[b].ids.size();
  });
  torch::Tensor embeddings = torch::zeros({size, e.hidden}, torch::kFloat32);
  for (int64_t b = e.rank * e.batch_size; b < size; b += e.batch_size * e.world) {
    const int64_t rows = std::min(e.batch_size, size - b);
    std::vector<Encoding> batch;
    for (int64_t r = 0; r < rows; ++r) batch.push_back(encodings[order[b + r]]);
    absl::StatusOr<torch::Tensor> pooled = EncodeBatch(e, batch);
    if (!pooled.ok()) return pooled.status();
    const torch::Tensor rows_index = torch::tensor(
        std::vector<int64_t>(order.begin() + b, order.begin() + b + rows), torch::kLong);
    embeddings.index_copy_(0, rows_index, *pooled);
  }
  if (e.group == nullptr) return embeddings;
  // Each row was computed by one rank and is zero elsewhere: the sum is the chunk.
  torch::Tensor all = e.group->backend() == comm::ProcessGroup::Backend::kNccl
                          ? embeddings.to(e.target)
                          : embeddings;
  if (absl::Status s = e.group->AllReduceSum(all); !s.ok()) return OnRank(e.rank, s);
  return all.to(torch::kCPU).contiguous();
}

// One chunk's embeddings appended to the output: raw float32 rows (.npy), or JSON lines.
absl::Status WriteChunk(const torch::Tensor& embeddings, int64_t hidden, bool npy, AtomicFile& out,
                        std::string* text) {
  const int64_t size = embeddings.size(0);
  const float* data = embeddings.data_ptr<float>();
  if (npy) return out.Append(reinterpret_cast<const char*>(data), size * hidden * sizeof(float));
  text->clear();
  for (int64_t i = 0; i < size; ++i) AppendJsonLine(data + i * hidden, hidden, text);
  return out.Append(text->data(), text->size());
}

// Encodes every line, chunk by chunk; rank 0 appends each chunk to `out`. An exit code.
int EncodeLines(const Encoder& e, const std::vector<std::string>& lines, bool npy,
                AtomicFile& out) {
  try {
    torch::NoGradGuard no_grad;
    BertModel model = e.model;
    model->to(e.target);
    std::string text;
    const int64_t n = static_cast<int64_t>(lines.size());
    const int64_t chunk = e.batch_size * kBatchesPerChunk;
    for (int64_t begin = 0; begin < n; begin += chunk) {
      absl::StatusOr<torch::Tensor> embeddings =
          EncodeChunk(e, lines, begin, std::min(chunk, n - begin));
      if (!embeddings.ok()) return Fail(kExitFailure, embeddings.status());
      if (e.rank != 0) continue;
      if (absl::Status s = WriteChunk(*embeddings, e.hidden, npy, out, &text); !s.ok()) {
        return Fail(kExitFailure, s);
      }
    }
  } catch (const c10::Error& error) {
    return Fail(kExitFailure, absl::InternalError(absl::StrCat("encoding failed: ",
                                                               error.what_without_backtrace())));
  }
  return kExitOk;
}

}  // namespace

int RunEncode(const std::vector<std::string>& args) {
  EncodeOptions options;
  if (int rc = ParseEncodeFlags(args, &options); rc >= 0) return rc;
  absl::Status status = CheckEncodeOptions(&options);
  auto env = comm::DistEnv::FromEnvironment();
  if (status.ok() && !env.ok()) status = env.status();
  if (!status.ok()) return Fail(kExitUsage, status);
  // Every rank reads the input; one warning for it is enough.
  absl::StatusOr<std::vector<std::string>> lines =
      ReadInputLines(options.input, env->rank == 0 ? &std::cerr : nullptr);
  if (!lines.ok()) return Fail(kExitUsage, lines.status());

  absl::StatusOr<InferenceModel> loaded = LoadInferenceModel(options.model_dir);
  if (!loaded.ok()) return Fail(kExitUsage, loaded.status());
  const BertCheckpoint& info = loaded->info;
  auto pooling = ParsePooling(PoolingNameOrDefault(options.pooling_name, info));
  if (!pooling.ok()) {
    return Fail(kExitUsage, options.pooling_set ? pooling.status()
                                                : absl::UnimplementedError(absl::StrCat(
                                                      options.model_dir, ": the model's pooling ",
                                                      pooling.status().message())));
  }
  auto selected = TargetDevice(options.device_name, env->distributed() ? env->local_rank : -1);
  if (!selected.ok()) return Fail(kExitUsage, selected.status());
  absl::StatusOr<std::unique_ptr<comm::ProcessGroup>> group = ConnectRanks(*env, *selected);
  if (!group.ok()) return Fail(kExitFailure, group.status());

  Encoder e;
  e.model = loaded->bert;
  e.tokenizer = loaded->tokenizer.get();
  e.pooling = *pooling;
  e.normalize = info.normalize;
  e.max_len = MaxLenOrDefault(options.max_len, info);
  e.prompt = options.prompt;
  e.prompt_length = info.include_prompt ? 0 : PromptLength(*e.tokenizer, e.prompt, e.max_len);
  e.batch_size = options.batch_size;
  e.hidden = info.config.hidden_size;
  e.target = *selected;
  e.precision = options.precision;
  e.group = group->get();
  e.world = e.group ? e.group->size() : 1;
  e.rank = e.group ? e.group->rank() : 0;

  const bool npy = absl::EndsWith(options.output, ".npy");
  // Rank 0 writes the output through a temporary file renamed into place at the end.
  AtomicFile out(options.output);
  if (e.rank == 0) {
    if (absl::Status s = out.Open(); !s.ok()) return Fail(kExitUsage, s);
  }
  const int64_t n = static_cast<int64_t>(lines->size());
  if (e.rank == 0 && npy) {
    const std::string header = NpyHeader(n, e.hidden);
    if (absl::Status s = out.Append(header.data(), header.size()); !s.ok()) {
      return Fail(kExitFailure, s);
    }
  }
  const auto start = std::chrono::steady_clock::now();
  if (int rc = EncodeLines(e, *lines, npy, out); rc != kExitOk) return rc;
  if (e.group != nullptr) {  // every rank ends the group together: no NCCL warning at exit
    if (absl::Status s = e.group->Shutdown(); !s.ok()) return Fail(kExitFailure, OnRank(e.rank, s));
  }
  if (e.rank != 0) return kExitOk;
  if (absl::Status s = out.Commit(); !s.ok()) return Fail(kExitFailure, s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TF_LOG(INFO) << "encoded " << n << " sentences (pooling " << PoolingName(e.pooling)
               << (e.normalize ? ", normalized" : "") << ", max_len " << e.max_len << ") on "
               << e.target.str()
               << (e.world > 1 ? absl::StrCat(" and ", e.world - 1, " more rank(s)") : "") << " in "
               << seconds << " s into " << options.output;
  return kExitOk;
}

}  // namespace trainer
}  // namespace tunefleet
