// The training step that bench/train_throughput_bench.cc times: tunefleet's BERT with the
// trainer's classification head (trainer/tasks/task_model.h), one fixed batch on the device, and
// the optimizer of the variant (torch::optim::AdamW for eager, trainer/optim/adamw.h's multi-tensor
// AdamW otherwise, one per gradient bucket with --optimizer_per_bucket), data parallel through
// trainer/distributed/grad_sync.h when given a process group. The workload's constants are the
// anchor's (shared/bench/pytorch_anchor.py): see train_throughput_bench.cc's file comment.
// Thread-safety: not thread-safe; one per process.
#ifndef TUNEFLEET_BENCH_THROUGHPUT_TRAINER_H_
#define TUNEFLEET_BENCH_THROUGHPUT_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/optim/adamw.h>
#include <torch/types.h>

#include "comm/process_group.h"
#include "trainer/data/task_data.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/model/autocast.h"
#include "trainer/model/bert_config.h"
#include "trainer/optim/adamw.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace bench {

inline constexpr int64_t kNumLabels = 2;
inline constexpr double kLr = 2e-5, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8, kWeightDecay = 0.01;

// train_throughput_bench's flags.
struct ThroughputOptions {
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
  std::string kernels =
      "fused";  // fused: trainer/model/fused_norm.h's CUDA kernels where built; aten
  std::string grad_comm = "fp32";  // DDP: dtype of the gradient all-reduce
  int64_t bucket_mb = 25;          // DDP: gradient bucket cap
  bool no_overlap = false;         // DDP: every bucket's all-reduce after backward (diagnostic)
  bool optimizer_per_bucket =
      false;            // DDP, fused: step each bucket's parameters once it is reduced
  bool phases = false;  // CUDA, eager / fused: time each step's phases with CUDA events
};

// Model, one fixed batch and the optimizer of the chosen variant.
class ThroughputTrainer {
 public:
  // Builds the model from `config` (seeded by the caller) on `device`; `group`: null for one
  // process. Errors throw c10::Error.
  ThroughputTrainer(const ThroughputOptions& o, const trainer::BertConfig& config,
                    torch::Device device, comm::ProcessGroup* group);

  // Forward under autocast (bf16) and backward of `batch` (on the device); returns the loss,
  // detached. Under DDP the gradients are views into the buckets: zeroed here (inside a
  // captured step too), all-reduced by the hooks during backward, completed by Finish()
  // (which steps the bucket optimizers with --optimizer_per_bucket).
  torch::Tensor ForwardBackward(const trainer::TaskBatch& batch);
  // The optimizer step at kLr (nothing when the bucket optimizers stepped already).
  void OptimizerStep();
  // zero_grad(set_to_none=True); under DDP the bucket views stay (ForwardBackward zeroes them).
  void ClearGrads();
  // One whole step on the fixed batch: ForwardBackward, OptimizerStep, ClearGrads.
  torch::Tensor Step();

  // --phases: called at the step's start (0), after forward (1), after backward (2), once the
  // gradients are reduced (3) and after the optimizer (4); unset, nothing is recorded.
  void set_marker(std::function<void(int)> marker) { marker_ = std::move(marker); }
  // The fixed batch on the host, as trainer/train/step_graphs.h takes it.
  const trainer::TaskBatch& host_batch();

 private:
  void Mark(int point) {
    if (marker_) marker_(point);
  }

  torch::Device device_;
  trainer::Precision precision_;
  trainer::TaskModel model_;
  std::vector<torch::Tensor> params_;
  trainer::TaskBatch batch_, host_batch_;
  std::unique_ptr<torch::optim::AdamW> eager_;
  std::unique_ptr<trainer::AdamW> fused_;
  std::vector<std::unique_ptr<trainer::AdamW>> bucket_fused_;
  std::unique_ptr<trainer::GradSync> grad_sync_;
  std::function<void(int)> marker_;
};

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_THROUGHPUT_TRAINER_H_
