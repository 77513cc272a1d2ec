// train_throughput_bench: training samples/s of tunefleet's BERT (trainer/bert_model.h) with a
// sequence-classification head, the C++ counterpart of shared/bench/pytorch_anchor.py (Hugging
// Face BertForSequenceClassification in eager PyTorch). Same workload as the anchor:
//   - model: --model bert-base (hidden 768, 12 layers, 12 heads, intermediate 3072) or minilm-l6
//     (384 / 6 / 12 / 1536); vocab 30522, 512 positions, random init (normal 0.02), seed 0;
//   - head: pooler (tanh dense of [CLS]) -> dropout -> linear(hidden, 2), cross entropy;
//     dropout 0.1 everywhere (transformers' defaults; --dropout changes all of them);
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
//   fused: the same with the trainer's multi-tensor AdamW (trainer/adamw.h): at::_fused_adamw_ on
//          CUDA with LibTorch >= 2.4 (the kernel of torch's AdamW(fused=True)), else _foreach_*;
//   graph: the fused step (forward, backward, optimizer, with its step count on the device)
//          captured once in a CUDA graph after warm-up on a side stream, then replayed (CUDA only).
// Prints one JSON line: the anchor's keys (samples_per_s, model_tflops with the anchor's FLOP
// formula, peak_mem_gib) plus impl, variant, device, step_ms, loss_first (first warm-up step)
// and loss_last (last timed step). Single process, single device.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#ifdef TUNEFLEET_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "comm/process_group.h"
#include "common/cli.h"
#include "trainer/adamw.h"
#include "trainer/autocast.h"
#include "trainer/bert_model.h"
#include "trainer/checkpoint.h"
#include "trainer/device.h"
#include "trainer/grad_sync.h"
#include "trainer/memory_estimate.h"

namespace tunefleet {
namespace bench {
namespace {

constexpr char kProgram[] = "train_throughput_bench";
constexpr int64_t kNumLabels = 2;
constexpr double kLr = 2e-5, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8, kWeightDecay = 0.01;
// Graph variant: eager (fused) steps on the side stream before the capture; the rest of --warmup
// are replays.
constexpr int64_t kGraphEagerWarmup = 3;

struct Options {
  std::string model = "bert-base";
  std::string precision = "bf16";
  std::string variant = "fused";
  std::string device = "cuda";
  int64_t batch = 32;
  int64_t seq = 128;
  int64_t steps = 30;
  int64_t warmup = 5;
  double dropout = 0.1;
  std::string qkv = "fused";
  std::string grad_comm = "fp32";  // DDP: dtype of the gradient all-reduce
  int64_t bucket_mb = 25;          // DDP: gradient bucket cap
  bool no_overlap = false;         // DDP: every bucket's all-reduce after backward (diagnostic)
  bool optimizer_per_bucket = false;  // DDP, fused: step each bucket's parameters once it is reduced
  bool phases = false;             // CUDA, eager / fused: time each step's phases with CUDA events
};

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

// transformers' BertForSequenceClassification: BertModel, dropout on the pooled output, linear.
class BertClassifierImpl : public torch::nn::Module {
 public:
  BertClassifierImpl(const trainer::BertConfig& c, bool fused_qkv)
      : dropout_(c.hidden_dropout_prob) {
    bert_ = register_module("bert", trainer::BertModel(c));
    bert_->set_fused_qkv(fused_qkv);
    classifier_ = register_module("classifier", torch::nn::Linear(c.hidden_size, kNumLabels));
    torch::NoGradGuard no_grad;
    classifier_->weight.normal_(0.0, 0.02);
    classifier_->bias.zero_();
  }

  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) {
    // An all-ones mask is no mask: transformers drops it too (and SDPA may then run flash).
    const torch::Tensor pooled = bert_->forward(ids, /*token_type_ids=*/{}, mask).pooler_output;
    return classifier_(torch::dropout(pooled, dropout_, is_training()));
  }

 private:
  double dropout_;
  trainer::BertModel bert_{nullptr};
  torch::nn::Linear classifier_{nullptr};
};
TORCH_MODULE(BertClassifier);

// Model, one fixed batch and the optimizer of the chosen variant.
class Trainer {
 public:
  Trainer(const Options& o, const trainer::BertConfig& config, torch::Device device,
          comm::ProcessGroup* group)
      : device_(device),
        precision_(o.precision == "bf16" ? trainer::Precision::kBf16 : trainer::Precision::kFp32),
        model_(config, o.qkv == "fused") {
    model_->to(device);
    model_->train();
    params_ = model_->parameters();
    if (group != nullptr) {
      grad_sync_ = std::make_unique<trainer::GradSync>(
          group, params_, o.bucket_mb << 20,
          o.grad_comm == "bf16" ? c10::optional<torch::ScalarType>(torch::kBFloat16) : c10::nullopt);
      grad_sync_->set_overlap(!o.no_overlap);
      const absl::Status s = grad_sync_->BroadcastParameters();
      TORCH_CHECK(s.ok(), std::string(s.message()));
    }
    const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
    ids_ = torch::randint(1000, 30000, {o.batch, o.seq}, longs);
    // No padding: the anchor's attention mask is all ones, which transformers drops before
    // SDPA; undefined here means the same (trainer/bert_model.h).
    mask_ = torch::Tensor();
    labels_ = torch::randint(0, kNumLabels, {o.batch}, longs);
    if (o.variant == "eager") {
      eager_ = std::make_unique<torch::optim::AdamW>(
          params_, torch::optim::AdamWOptions(kLr).betas({kBeta1, kBeta2}).eps(kEps).weight_decay(
                       kWeightDecay));
    } else if (o.optimizer_per_bucket && grad_sync_ != nullptr) {
      // One optimizer per gradient bucket (the same arithmetic per parameter), stepped from
      // GradSync::Finish as each bucket's mean arrives.
      for (int64_t b = 0; b < grad_sync_->num_buckets(); ++b) {
        std::vector<torch::Tensor> bucket;
        for (size_t k : grad_sync_->bucket_params(b)) bucket.push_back(params_[k]);
        bucket_fused_.push_back(std::make_unique<trainer::AdamW>(
            bucket, trainer::AdamWOptions{kBeta1, kBeta2, kEps, kWeightDecay}));
      }
    } else {
      fused_ = std::make_unique<trainer::AdamW>(
          params_, trainer::AdamWOptions{kBeta1, kBeta2, kEps, kWeightDecay});
    }
  }

  // Forward under autocast (bf16) and backward; returns the loss, detached.
  // Under DDP the gradients are views into the buckets: zeroed here (inside a captured step
  // too), all-reduced by the hooks during backward, completed by Finish().
  torch::Tensor ForwardBackward() {
    if (grad_sync_ != nullptr) grad_sync_->ZeroGrads();
    torch::Tensor loss;
    {
      trainer::AutocastScope autocast(device_.type(), precision_);
      loss = torch::nn::functional::cross_entropy(model_->forward(ids_, mask_), labels_);
    }
    Mark(1);
    loss.backward();
    Mark(2);
    if (grad_sync_ != nullptr) {
      std::function<void(int64_t)> after_bucket;
      if (!bucket_fused_.empty()) {
        after_bucket = [this](int64_t b) { bucket_fused_[static_cast<size_t>(b)]->Step(kLr); };
      }
      const absl::Status s = grad_sync_->Finish(after_bucket);
      TORCH_CHECK(s.ok(), std::string(s.message()));
    }
    Mark(3);
    return loss.detach();
  }

  void OptimizerStep() {
    if (eager_ != nullptr) {
      eager_->step();
    } else if (fused_ != nullptr) {
      fused_->Step(kLr);
    }  // else the bucket optimizers stepped in ForwardBackward
  }

  // zero_grad(set_to_none=True).
  void ClearGrads() {
    if (grad_sync_ != nullptr) return;  // bucket views stay; ForwardBackward zeroes them
    for (torch::Tensor& p : params_) p.mutable_grad() = torch::Tensor();
  }

  torch::Tensor Step() {
    Mark(0);
    torch::Tensor loss = ForwardBackward();
    OptimizerStep();
    Mark(4);
    ClearGrads();
    return loss;
  }

  // --phases: called at the step's start (0), after forward (1), after backward (2), once the
  // gradients are reduced (3) and after the optimizer (4); unset, nothing is recorded.
  void set_marker(std::function<void(int)> marker) { marker_ = std::move(marker); }

 private:
  torch::Device device_;
  trainer::Precision precision_;
  BertClassifier model_;
  std::vector<torch::Tensor> params_;
  torch::Tensor ids_, mask_, labels_;
  std::unique_ptr<torch::optim::AdamW> eager_;
  std::unique_ptr<trainer::AdamW> fused_;
  std::vector<std::unique_ptr<trainer::AdamW>> bucket_fused_;
  std::unique_ptr<trainer::GradSync> grad_sync_;
  std::function<void(int)> marker_;

  void Mark(int point) {
    if (marker_) marker_(point);
  }
};

void Synchronize(const torch::Device& device) {
#ifdef TUNEFLEET_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

#ifdef TUNEFLEET_CUDA
// --phases: CUDA events on the step's stream at the trainer's five marks of every timed step.
// Where the stream waited for the gradient all-reduce (mark 3), "reduce" is the communication
// that backward did not hide; the GPU's clock, not the host's.
class PhaseTimer {
 public:
  static constexpr int kMarks = 5;
  explicit PhaseTimer(int64_t steps) {
    for (int64_t i = 0; i < steps * kMarks; ++i) {
      events_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    }
  }
  // Mark 0 opens the next step.
  void Mark(int point) {
    if (point == 0) ++step_;
    const int64_t i = step_ * kMarks + point;
    if (step_ >= 0 && i < static_cast<int64_t>(events_.size())) events_[static_cast<size_t>(i)]->record();
  }
  // After a device synchronization: mean ms of forward, backward, reduce and optimizer.
  std::string Json() const {
    static const char* kNames[] = {"forward", "backward", "reduce", "optimizer"};
    const int64_t steps = static_cast<int64_t>(events_.size()) / kMarks;
    std::string out = "{";
    for (int p = 0; p + 1 < kMarks; ++p) {
      double sum = 0;
      for (int64_t s = 0; s < steps; ++s) {
        sum += events_[static_cast<size_t>(s * kMarks + p)]->elapsed_time(
            *events_[static_cast<size_t>(s * kMarks + p + 1)]);
      }
      absl::StrAppend(&out, p == 0 ? "" : ", ", "\"", kNames[p], "\": ",
                      std::round(100 * sum / static_cast<double>(steps)) / 100);
    }
    return out + "}";
  }

 private:
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;
  int64_t step_ = -1;
};
#endif

// eager and fused: the anchor's loop.
Result RunEager(Trainer& trainer, const Options& o, const torch::Device& device) {
  Result r;
  for (int64_t i = 0; i < o.warmup; ++i) {
    torch::Tensor loss = trainer.Step();
    if (i == 0) r.loss_first = loss.item<double>();
  }
#ifdef TUNEFLEET_CUDA
  std::unique_ptr<PhaseTimer> phases;
  if (o.phases) {
    phases = std::make_unique<PhaseTimer>(o.steps);
    trainer.set_marker([&phases](int point) { phases->Mark(point); });
  }
#endif
  Synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  torch::Tensor loss;
  for (int64_t i = 0; i < o.steps; ++i) loss = trainer.Step();
  Synchronize(device);
  r.seconds = Seconds(start);
  r.loss_last = loss.item<double>();
#ifdef TUNEFLEET_CUDA
  if (phases != nullptr) {
    trainer.set_marker(nullptr);
    r.phases_json = phases->Json();
  }
#endif
  return r;
}

#ifdef TUNEFLEET_CUDA
// graph: warm-up on a side stream, capture one whole step, replay it.
Result RunGraph(Trainer& trainer, const Options& o, const torch::Device& device) {
  Result r;
  // The caller made a side stream current before building the model.
  c10::cuda::CUDAStream side = c10::cuda::getCurrentCUDAStream();
  TORCH_CHECK(side != c10::cuda::getDefaultCUDAStream(), "graph variant on the default stream");
  c10::cuda::device_synchronize();
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  torch::Tensor static_loss;
  {
    // Creates the cuBLAS / cuDNN handles and workspaces of this stream, the autograd threads and
    // the optimizer's first moments.
    for (int64_t i = 0; i < kGraphEagerWarmup; ++i) {
      torch::Tensor loss = trainer.Step();
      if (i == 0) r.loss_first = loss.item<double>();
    }
    side.synchronize();
    // No gradients before the capture: the captured backward allocates them in the graph's
    // pool (instead of accumulating into old ones), and each replay overwrites them.
    trainer.ClearGrads();
    // Relaxed capture: under DDP, NCCL's own threads make CUDA calls while this one captures.
    graph->capture_begin({0, 0}, cudaStreamCaptureModeRelaxed);
    static_loss = trainer.ForwardBackward();
    trainer.OptimizerStep();
    graph->capture_end();
  }
  c10::cuda::device_synchronize();
  for (int64_t i = kGraphEagerWarmup; i < o.warmup; ++i) graph->replay();
  Synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.steps; ++i) graph->replay();
  Synchronize(device);
  r.seconds = Seconds(start);
  r.loss_last = static_loss.item<double>();
  return r;
}
#endif

absl::Status Validate(const Options& o) {
  if (o.model != "bert-base" && o.model != "minilm-l6") {
    return absl::InvalidArgumentError("--model must be bert-base or minilm-l6");
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
    if (o.device != "cuda") return absl::InvalidArgumentError("--variant graph needs --device cuda");
    if (o.warmup < kGraphEagerWarmup) {
      return absl::InvalidArgumentError(
          absl::StrCat("--variant graph needs --warmup of at least ", kGraphEagerWarmup));
    }
  }
  if (o.device == "cuda" && !torch::cuda::is_available()) {
    return absl::FailedPreconditionError("--device cuda: no CUDA device (try --device cpu)");
  }
  return absl::OkStatus();
}

trainer::BertConfig ModelConfig(const Options& o) {
  trainer::BertConfig c;  // vocab 30522, 512 positions, 2 token types, GELU, eps 1e-12
  if (o.model == "minilm-l6") {
    c.hidden_size = 384;
    c.num_hidden_layers = 6;
    c.num_attention_heads = 12;
    c.intermediate_size = 1536;
  }
  c.hidden_dropout_prob = o.dropout;
  c.attention_probs_dropout_prob = o.dropout;
  return c;
}

int Main(const std::vector<std::string>& args) {
  Options o;
  CommandLine cli(kProgram, "",
                  "Training samples/s of tunefleet's BERT with a classification head: the C++\n"
                  "counterpart of shared/bench/pytorch_anchor.py (see the file comment).");
  cli.AddString("model", &o.model, "bert-base or minilm-l6", "NAME");
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
                "under DDP: fp32 gradient all-reduce, or bf16 (cast, averaged, cast back)", "DTYPE");
  absl::Status parsed = cli.Parse(args);
  if (cli.help_requested()) {
    std::printf("%s", cli.Help().c_str());
    return kExitOk;
  }
  if (parsed.ok()) parsed = Validate(o);
  if (!parsed.ok()) {
    PrintError(kProgram, parsed);
    return kExitUsage;
  }
  // Data parallel when started by torchrun (torchrun --no-python ... train_throughput_bench).
  auto env = comm::DistEnv::FromEnvironment();
  if (!env.ok()) {
    PrintError(kProgram, env.status());
    return kExitUsage;
  }
  try {
    const torch::Device device = o.device == "cuda"
                                     ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(
                                                                       env->local_rank))
                                     : torch::Device(torch::kCPU);
    trainer::MakeCurrent(device);
    std::unique_ptr<comm::ProcessGroup> group;
    if (env->distributed()) {
      auto connected = comm::ProcessGroup::Connect(
          *env, device.is_cuda() ? comm::ProcessGroup::Backend::kNccl : comm::ProcessGroup::Backend::kGloo,
          std::chrono::seconds(300));
      if (!connected.ok()) {
        PrintError(kProgram, connected.status());
        return kExitFailure;
      }
      group = std::move(*connected);
    }
    const int world = env->world_size;
    torch::manual_seed(0);
    const trainer::BertConfig config = ModelConfig(o);
#ifdef TUNEFLEET_CUDA
    // Graph variant: everything on one side stream from the start, the model and the DDP
    // gradient hooks included (trainer/grad_sync.h): the autograd engine runs a parameter's
    // gradient accumulation on the stream it was created on, and a capture must not touch the
    // legacy default stream. (PyTorch's DDP asks the same: built in a side-stream context.)
    std::optional<c10::cuda::CUDAStreamGuard> side;
    if (o.variant == "graph") side.emplace(c10::cuda::getStreamFromPool());
#endif
    Trainer runner(o, config, device, group.get());
    Synchronize(device);
    trainer::ResetPeakMemory(device);
    Result r;
#ifdef TUNEFLEET_CUDA
    r = o.variant == "graph" ? RunGraph(runner, o, device) : RunEager(runner, o, device);
#else
    r = RunEager(runner, o, device);
#endif
    if (device.is_cuda()) r.peak_mem_gib = trainer::GiB(trainer::PeakMemoryBytes(device));
    if (group != nullptr) {  // the slowest rank's time is the job's
      torch::Tensor t = torch::tensor({r.seconds}, torch::kDouble);
      if (device.is_cuda()) t = t.to(device);
      auto gathered = group->AllGather(t);
      TORCH_CHECK(gathered.ok(), std::string(gathered.status().message()));
      r.seconds = gathered->max().item<double>();
      if (env->rank != 0) return kExitOk;
    }
    const double samples_per_s = static_cast<double>(o.batch * o.steps * world) / r.seconds;
    const double tflops = samples_per_s * FlopsPerSequence(config, o.seq) / 1e12;
    const std::string peak =
        r.peak_mem_gib ? absl::StrCat(std::round(*r.peak_mem_gib * 100) / 100) : "null";
    std::printf(
        "{\"impl\": \"tunefleet\", \"variant\": \"%s\", \"qkv\": \"%s\", \"grad_comm\": \"%s\", "
        "\"model\": \"%s\", "
        "\"precision\": \"%s\", "
        "\"world\": %d, \"batch_per_gpu\": %lld, \"seq\": %lld, \"device\": \"%s\", "
        "\"samples_per_s\": %.1f, \"model_tflops\": %.1f, \"peak_mem_gib\": %s, "
        "\"step_ms\": %.2f, \"phases_ms\": %s, \"loss_first\": %.6f, \"loss_last\": %.6f, "
        "\"libtorch\": \"%s\"}\n",
        o.variant.c_str(), o.qkv.c_str(), o.grad_comm.c_str(), o.model.c_str(), o.precision.c_str(), world,
        static_cast<long long>(o.batch),
        static_cast<long long>(o.seq), o.device.c_str(), samples_per_s, tflops, peak.c_str(),
        1e3 * r.seconds / static_cast<double>(o.steps), r.phases_json.c_str(), r.loss_first,
        r.loss_last,
        trainer::DescribeLibTorch().c_str());
    std::fflush(stdout);
  } catch (const c10::Error& e) {
    PrintError(kProgram, absl::InternalError(e.what_without_backtrace()));
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet

int main(int argc, char** argv) {
  return tunefleet::bench::Main(std::vector<std::string>(argv + 1, argv + argc));
}
