// train_throughput_bench: training samples/s of tunefleet's BERT (trainer/model/bert_model.h) with
// a sequence-classification head, the C++ counterpart of shared/bench/pytorch_anchor.py (Hugging
// Face BertForSequenceClassification in eager PyTorch). Same workload as the anchor:
//   - model: --model bert-base (hidden 768, 12 layers, 12 heads, intermediate 3072) or minilm-l6
//     (384 / 6 / 12 / 1536); vocab 30522, 512 positions, random init (normal 0.02), seed 0;
//     or the Hub's roberta-base (vocab 50265), xlm-r-base (vocab 250002) and mpnet-base (vocab
//     30527, relative attention bias), 768 / 12 / 12 / 3072, 514 positions, built from their
//     config.json by their model family (bench/gpu/family_anchor.py is their anchor);
//   - head: the trainer's classification task model (trainer/tasks/task_model.h): pooler
//     (tanh dense of [CLS]) -> dropout -> linear(hidden, 2), cross entropy; dropout 0.1 everywhere
//     (transformers' defaults; --dropout changes all of them);
//   - inputs: one fixed batch, ids uniform in [1000, 30000), attention mask all ones, labels
//     in {0, 1}, --seq 128;
//   - AdamW lr 2e-5, betas (0.9, 0.999), eps 1e-8, weight decay 0.01 (torch's defaults);
//   - --precision bf16: autocast semantics (matmuls in bf16; parameters, gradients and optimizer
//     state in fp32); fp32: plain fp32 (no TF32, PyTorch's default);
//   - --warmup 5 untimed steps, then --steps 30 timed steps between two device synchronizations;
//     peak memory = the CUDA caching allocator's peak allocated bytes since after set-up
//     (torch.cuda.max_memory_allocated).
// --variant says how a step runs, so each improvement is measured on its own:
//   eager: forward, backward, torch::optim::AdamW (one small kernel per tensor and operation),
//          gradients set to none (the anchor's zero_grad(set_to_none=True));
//   fused: the same with the trainer's multi-tensor AdamW (trainer/optim/adamw.h):
//          at::_fused_adamw_ on CUDA with LibTorch >= 2.4 (the kernel of torch's
//          AdamW(fused=True)), else _foreach_*;
//   graph: the fused step replayed as CUDA graphs the way the trainer replays its steps
//          (trainer/train/step_graphs.h: forward and backward in one graph, the optimizer with its
//          step count on the device in another), on a side stream, after eager warm-up steps;
//          the first graphed step captures them and counts as a warm-up step (CUDA only).
// Prints one JSON line: the anchor's keys (samples_per_s, model_tflops with the anchor's FLOP
// formula, peak_mem_gib) plus impl, variant, device, step_ms, loss_first (first warm-up step)
// and loss_last (last timed step). Single process, single device.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bench/phase_timer.h"
#include "bench/throughput_trainer.h"
#include "comm/process_group.h"
#include "common/cli.h"
#include "trainer/data/task_data.h"
#include "trainer/device.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/fused_linear.h"
#include "trainer/model/fused_norm.h"
#include "trainer/model/model_family_registry.h"
#include "trainer/train/memory_estimate.h"
#include "trainer/train/step_graphs.h"

namespace tunefleet {
namespace bench {
namespace {

// The Hub's base encoders beyond BERT share this shape.
constexpr char kBaseShape[] =
    R"("hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, )"
    R"("intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 514, )"
    R"("layer_norm_eps": 1e-05, "hidden_dropout_prob": 0.1, )"
    R"("attention_probs_dropout_prob": 0.1, "pad_token_id": 1)";

constexpr char kProgram[] = "train_throughput_bench";
// Graph variant: eager (fused) steps on the side stream before the capture; the capturing step
// and the rest of --warmup are replays.
constexpr int64_t kGraphEagerSteps = 2;

struct Result {
  double seconds = 0.0;
  double loss_first = 0.0;
  double loss_last = 0.0;
  std::optional<double> peak_mem_gib;
  std::string phases_json = "null";  // --phases: mean milliseconds of each phase of a timed step
};

// The anchor's flops_per_seq: forward matmuls + attention, times 3 for forward + backward.
double FlopsPerSequence(const trainer::BertConfig& c, int64_t seq) {
  const double h = static_cast<double>(c.hidden_size), i = static_cast<double>(c.intermediate_size);
  const double t = static_cast<double>(seq);
  const double per_layer = 2 * t * (4 * h * h + 2 * h * i) + 2 * 2 * t * t * h;
  return 3 * static_cast<double>(c.num_hidden_layers) * per_layer;
}

void Synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// eager and fused: the anchor's loop.
Result RunEager(ThroughputTrainer& trainer, const ThroughputOptions& o,
                const torch::Device& device) {
  Result r;
  for (int64_t i = 0; i < o.warmup; ++i) {
    torch::Tensor loss = trainer.Step();
    if (i == 0) r.loss_first = loss.item<double>();
  }
  std::unique_ptr<PhaseTimer> phases;
  if (o.phases) {
    phases = std::make_unique<PhaseTimer>(o.steps);
    trainer.set_marker([&phases](int point) { phases->Mark(point); });
  }
  Synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  torch::Tensor loss;
  for (int64_t i = 0; i < o.steps; ++i) loss = trainer.Step();
  Synchronize(device);
  r.seconds = Seconds(start);
  r.loss_last = loss.item<double>();
  if (phases != nullptr) {
    trainer.set_marker(nullptr);
    r.phases_json = phases->Json();
  }
  return r;
}

#ifdef TUNEFLEET_CUDA
// graph: warm-up on the side stream the caller made current before building the model, then
// every step replayed as trainer/train/step_graphs.h's graphs (the first step captures them).
Result RunGraph(ThroughputTrainer& trainer, const ThroughputOptions& o,
                const torch::Device& device) {
  Result r;
  // Creates the cuBLAS / cuDNN handles and workspaces of this stream, the autograd threads and
  // the optimizer's first moments.
  for (int64_t i = 0; i < kGraphEagerSteps; ++i) {
    torch::Tensor loss = trainer.Step();
    if (i == 0) r.loss_first = loss.item<double>();
  }
  Synchronize(device);
  // No gradients before the capture: the captured backward allocates them in the graphs' pool
  // (instead of accumulating into old ones), and each replay overwrites them.
  trainer.ClearGrads();
  trainer::StepGraphs graphs(
      device,
      [&trainer](const trainer::TaskBatch& batch, int64_t, bool, bool) {
        return trainer.ForwardBackward(batch);
      },
      [&trainer](const torch::Tensor& lr) {
        trainer.OptimizerStep();  // at kLr, as the other variants
        return lr;
      });
  torch::Tensor loss;
  const auto step = [&] {
    loss = graphs.MicroStep(trainer.host_batch(), /*micro=*/1, /*first=*/true, /*sync=*/true);
    graphs.Update(kLr);
  };
  for (int64_t i = kGraphEagerSteps; i < o.warmup; ++i) step();
  Synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.steps; ++i) step();
  Synchronize(device);
  r.seconds = Seconds(start);
  r.loss_last = loss.item<double>();
  return r;
}
#endif

// The other families' base shapes as the Hub's config.json files give them (roberta-base,
// xlm-roberta-base, all-mpnet-base-v2), as bench/gpu/family_anchor.py builds them.
const std::map<std::string, std::string>& FamilyShapes() {
  static const auto* const kShapes = new std::map<std::string, std::string>{
      {"roberta-base", absl::StrCat(R"({"model_type": "roberta", "vocab_size": 50265, )",
                                    kBaseShape, R"(, "type_vocab_size": 1})")},
      {"xlm-r-base", absl::StrCat(R"({"model_type": "xlm-roberta", "vocab_size": 250002, )",
                                  kBaseShape, R"(, "type_vocab_size": 1})")},
      {"mpnet-base", absl::StrCat(R"({"model_type": "mpnet", "vocab_size": 30527, )", kBaseShape,
                                  R"(, "relative_attention_num_buckets": 32})")},
  };
  return *kShapes;
}

absl::Status Validate(const ThroughputOptions& o) {
  if (o.model != "bert-base" && o.model != "minilm-l6" && FamilyShapes().count(o.model) == 0) {
    return absl::InvalidArgumentError(
        "--model must be bert-base, minilm-l6, roberta-base, xlm-r-base or mpnet-base");
  }
  if (o.precision != "fp32" && o.precision != "bf16") {
    return absl::InvalidArgumentError("--precision must be fp32 or bf16");
  }
  if (o.bucket_mb < 1) return absl::InvalidArgumentError("--bucket_mb must be >= 1");
  if (o.grad_comm != "fp32" && o.grad_comm != "bf16") {
    return absl::InvalidArgumentError("--grad_comm must be fp32 or bf16");
  }
  if (o.variant != "eager" && o.variant != "fused" && o.variant != "graph") {
    return absl::InvalidArgumentError("--variant must be eager, fused or graph");
  }
  if (o.device != "cuda" && o.device != "cpu") {
    return absl::InvalidArgumentError("--device must be cuda or cpu");
  }
  if (o.batch < 1 || o.seq < 1 || o.seq > 512 || o.steps < 1 || o.warmup < 1) {
    return absl::InvalidArgumentError(
        "--batch, --steps and --warmup must be positive, --seq in [1, 512]");
  }
  if (o.kernels != "fused" && o.kernels != "aten") {
    return absl::InvalidArgumentError("--kernels must be fused or aten");
  }
  if (o.qkv != "fused" && o.qkv != "separate") {
    return absl::InvalidArgumentError("--qkv must be fused or separate");
  }
  if (o.dropout < 0.0 || o.dropout >= 1.0) {
    return absl::InvalidArgumentError("--dropout must lie in [0, 1)");
  }
  if (o.phases && (o.variant == "graph" || o.device != "cuda")) {
    return absl::InvalidArgumentError("--phases needs --device cuda and --variant eager or fused");
  }
  if (o.variant == "graph") {
#ifndef TUNEFLEET_CUDA
    return absl::InvalidArgumentError("--variant graph needs a CUDA build of LibTorch");
#endif
    if (o.device != "cuda")
      return absl::InvalidArgumentError("--variant graph needs --device cuda");
    if (o.warmup < kGraphEagerSteps + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--variant graph needs --warmup of at least ", kGraphEagerSteps + 1));
    }
  }
  if (o.device == "cuda" && !torch::cuda::is_available()) {
    return absl::FailedPreconditionError("--device cuda: no CUDA device (try --device cpu)");
  }
  return absl::OkStatus();
}

trainer::BertConfig ModelConfig(const ThroughputOptions& o) {
  trainer::BertConfig c;  // vocab 30522, 512 positions, 2 token types, GELU, eps 1e-12
  if (o.model == "minilm-l6") {
    c.hidden_size = 384;
    c.num_hidden_layers = 6;
    c.num_attention_heads = 12;
    c.intermediate_size = 1536;
  } else if (auto it = FamilyShapes().find(o.model); it != FamilyShapes().end()) {
    // Parsed by the family, so the bench builds what a folder of that family builds.
    absl::StatusOr<trainer::BertConfig> parsed =
        trainer::ParseModelConfig(it->second, "--model " + o.model);
    if (!parsed.ok()) {
      PrintError(kProgram, parsed.status());
      std::exit(kExitFailure);
    }
    c = *parsed;
  }
  c.hidden_dropout_prob = o.dropout;
  c.attention_probs_dropout_prob = o.dropout;
  return c;
}

// Reads and checks the flags into `o`: an exit code when the bench ends here (--help, a bad
// flag), else -1.
int ParseOptions(const std::vector<std::string>& args, ThroughputOptions& o) {
  CommandLine cli(kProgram, "",
                  "Training samples/s of tunefleet's BERT with a classification head: the C++\n"
                  "counterpart of shared/bench/pytorch_anchor.py (see the file comment).");
  cli.AddString("model", &o.model, "bert-base, minilm-l6, roberta-base, xlm-r-base or mpnet-base",
                "NAME");
  cli.AddString("precision", &o.precision, "fp32 or bf16 (autocast)", "P");
  cli.AddString("variant", &o.variant,
                "eager (torch::optim::AdamW), fused (multi-tensor AdamW) or graph (fused step "
                "captured in a CUDA graph)",
                "V");
  cli.AddString("device", &o.device, "cuda or cpu", "D");
  cli.AddInt("batch", &o.batch, "sequences per step", "N");
  cli.AddInt("seq", &o.seq, "tokens per sequence", "N");
  cli.AddInt("steps", &o.steps, "timed steps", "N");
  cli.AddInt("warmup", &o.warmup, "untimed steps first", "N");
  cli.AddDouble("dropout", &o.dropout, "hidden, attention and classifier dropout", "P");
  cli.AddString(
      "kernels", &o.kernels,
      "fused (trainer/model/fused_norm.h's CUDA kernels and fused_linear.h's cuBLASLt bias "
      "gradients, where built) or aten (ATen's operations)",
      "MODE");
  cli.AddString("qkv", &o.qkv, "fused (one GEMM) or separate (three, as transformers)", "MODE");
  cli.AddInt("bucket_mb", &o.bucket_mb, "under DDP: gradient bucket cap (MiB)", "N");
  cli.AddBool("optimizer_per_bucket", &o.optimizer_per_bucket,
              "under DDP, variant fused or graph: step each bucket's parameters as soon as its "
              "all-reduce completes (hides the last buckets' communication)");
  cli.AddBool("phases", &o.phases,
              "CUDA, eager or fused: mean ms of forward, backward, reduce (the gradient "
              "all-reduce backward did not hide) and optimizer per timed step (CUDA events)");
  cli.AddBool("no_overlap", &o.no_overlap,
              "under DDP: start every bucket's all-reduce after backward (how much overlap hides)");
  cli.AddString("grad_comm", &o.grad_comm,
                "under DDP: fp32 gradient all-reduce, or bf16 (cast, averaged, cast back)",
                "DTYPE");
  if (const int exit_code = ParseOrExit(cli, args, kProgram); exit_code >= 0) return exit_code;
  if (absl::Status valid = Validate(o); !valid.ok()) {
    PrintError(kProgram, valid);
    return kExitUsage;
  }
  return -1;
}

// The timed run of `runner`'s variant, with the device's peak memory since set-up.
Result Measure(ThroughputTrainer& runner, const ThroughputOptions& o, const torch::Device& device) {
  Result r;
#ifdef TUNEFLEET_CUDA
  r = o.variant == "graph" ? RunGraph(runner, o, device) : RunEager(runner, o, device);
#else
  r = RunEager(runner, o, device);
#endif
  if (device.is_cuda()) r.peak_mem_gib = trainer::GiB(trainer::PeakMemoryBytes(device));
  return r;
}

// The JSON line on stdout.
void PrintResult(const ThroughputOptions& o, const trainer::BertConfig& config, int world,
                 const Result& r) {
  const double samples_per_s = static_cast<double>(o.batch * o.steps * world) / r.seconds;
  const double tflops = samples_per_s * FlopsPerSequence(config, o.seq) / 1e12;
  const std::string peak =
      r.peak_mem_gib ? absl::StrCat(std::round(*r.peak_mem_gib * 100) / 100) : "null";
  std::printf(
      "{\"impl\": \"tunefleet\", \"variant\": \"%s\", \"kernels\": \"%s\", \"qkv\": \"%s\", "
      "\"grad_comm\": \"%s\", "
      "\"model\": \"%s\", "
      "\"precision\": \"%s\", "
      "\"world\": %d, \"batch_per_gpu\": %lld, \"seq\": %lld, \"device\": \"%s\", "
      "\"samples_per_s\": %.1f, \"model_tflops\": %.1f, \"peak_mem_gib\": %s, "
      "\"step_ms\": %.2f, \"phases_ms\": %s, \"loss_first\": %.6f, \"loss_last\": %.6f, "
      "\"libtorch\": \"%s\"}\n",
      o.variant.c_str(),
      trainer::FusedNormEnabled() && trainer::FusedLinearEnabled() ? "fused" : "aten",
      o.qkv.c_str(), o.grad_comm.c_str(), o.model.c_str(), o.precision.c_str(), world,
      static_cast<long long>(o.batch), static_cast<long long>(o.seq), o.device.c_str(),
      samples_per_s, tflops, peak.c_str(), 1e3 * r.seconds / static_cast<double>(o.steps),
      r.phases_json.c_str(), r.loss_first, r.loss_last, trainer::DescribeLibTorch().c_str());
  std::fflush(stdout);
}

// Sets up the device, the process group (under torchrun) and the model, measures, and prints
// on rank 0. LibTorch's errors are thrown.
int Run(const ThroughputOptions& o, const comm::DistEnv& env) {
  const torch::Device device =
      o.device == "cuda"
          ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank))
          : torch::Device(torch::kCPU);
  trainer::MakeCurrent(device);
  std::unique_ptr<comm::ProcessGroup> group;
  if (env.distributed()) {
    auto connected = comm::ProcessGroup::Connect(
        env,
        device.is_cuda() ? comm::ProcessGroup::Backend::kNccl : comm::ProcessGroup::Backend::kGloo,
        std::chrono::seconds(300));
    if (!connected.ok()) {
      PrintError(kProgram, connected.status());
      return kExitFailure;
    }
    group = std::move(*connected);
  }
  torch::manual_seed(0);
  const trainer::BertConfig config = ModelConfig(o);
  // Graph variant: everything on one side stream from the start, the model and the DDP
  // gradient hooks included (trainer/train/step_graphs.h).
  std::optional<trainer::SideStreamScope> side;
  if (o.variant == "graph") side.emplace(device);
  auto runner = std::make_unique<ThroughputTrainer>(o, config, device, group.get());
  Synchronize(device);
  trainer::ResetPeakMemory(device);
  Result r = Measure(*runner, o, device);
  if (group != nullptr) {  // the slowest rank's time is the job's
    torch::Tensor t = torch::tensor({r.seconds}, torch::kDouble);
    if (device.is_cuda()) t = t.to(device);
    auto gathered = group->AllGather(t);
    TORCH_CHECK(gathered.ok(), std::string(gathered.status().message()));
    r.seconds = gathered->max().item<double>();
    runner.reset();  // its graphs hold NCCL work: gone before the communicators
    const absl::Status shut = group->Shutdown();
    TORCH_CHECK(shut.ok(), std::string(shut.message()));
    if (env.rank != 0) return kExitOk;
  }
  PrintResult(o, config, env.world_size, r);
  return kExitOk;
}

int Main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  ThroughputOptions o;
  if (const int exit_code = ParseOptions(args, o); exit_code >= 0) return exit_code;
  // Data parallel when started by torchrun (torchrun --no-python ... train_throughput_bench).
  auto env = comm::DistEnv::FromEnvironment();
  if (!env.ok()) {
    PrintError(kProgram, env.status());
    return kExitUsage;
  }
  try {
    return Run(o, *env);
  } catch (const c10::Error& e) {
    PrintError(kProgram, absl::InternalError(e.what_without_backtrace()));
    return kExitFailure;
  }
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::RunMain(/*role=*/"", tunefleet::bench::Main, argc, argv);
}
