// CUDA-graph replay of `trainer train`'s steps (train.cuda_graphs): small batches are bound by
// the host's kernel launches (a BERT-base step at batch 32 is a few thousand kernels), and a
// replayed graph launches them all at once.
//
// A step is replayed as graphs of two kinds, each captured the first time it is needed and then
// replayed:
//   - a micro-step graph per key (the batch's shapes and padding, whether it is the step's first
//     micro-step, which zeroes the gradients, whether it synchronizes under DDP, and the number
//     of micro-steps the loss is divided by): forward and backward into the persistent gradients;
//   - one update graph: gradient norm, clipping and AdamW, at a learning rate the host writes into
//     a device scalar before each replay (so the schedule goes on changing it).
// Inputs are copied into the key's static device tensors before each replay; outputs (the loss,
// the norm) are static tensors that the next replay of the same graph overwrites. The graphs
// of one StepGraphs share a memory pool: they run one after another on one stream, so the
// temporaries of one may reuse another's.
// The caller makes a side stream current before it builds the model, its gradient hooks and
// this object, and keeps it current (a capture cannot use the legacy default stream, and the
// autograd engine accumulates gradients on the stream the parameters' hooks were made on); it
// runs the first step eagerly (the optimizer's state, cuBLAS handles and NCCL communicators are
// created outside any capture), and keeps the gradients defined at fixed addresses.
// Pair tasks have both texts padded to their common length (the encoder pads them so anyway,
// trainer/tasks/task_model.h), and every batch is masked (even one whose rows fill its length):
// fewer keys. The training loop pads batches to a few lengths (trainer/data/batch_plan.h), so a run
// captures a graph per length it meets, and the short last batch of an epoch one more.
// Thread-safety: not thread-safe; one per training run. CUDA builds of LibTorch only
// (Available()).
#ifndef TUNEFLEET_TRAINER_TRAIN_STEP_GRAPHS_H_
#define TUNEFLEET_TRAINER_TRAIN_STEP_GRAPHS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <torch/types.h>

#include "trainer/data/task_data.h"

namespace tunefleet {
namespace trainer {

// Makes a new side stream of `device` current on this thread for its lifetime (nothing for
// the CPU or a LibTorch without CUDA).
class SideStreamScope {
 public:
  explicit SideStreamScope(const torch::Device& device);
  ~SideStreamScope();
  SideStreamScope(const SideStreamScope&) = delete;
  SideStreamScope& operator=(const SideStreamScope&) = delete;

 private:
  struct Guard;
  std::unique_ptr<Guard> guard_;
};

class StepGraphs {
 public:
  // Forward and backward of `batch` (device tensors) as micro-step `first` / `sync` of
  // `micro`; returns the loss (detached, float32 scalar).
  using MicroStepFn =
      std::function<torch::Tensor(const TaskBatch& batch, int64_t micro, bool first, bool sync)>;
  // Norm, clipping and optimizer step at learning rate `lr` (a float32 device scalar); returns
  // the total gradient norm before clipping.
  using UpdateFn = std::function<torch::Tensor(const torch::Tensor& lr)>;

  // Whether this LibTorch can capture (a CUDA build).
  static bool Available();

  StepGraphs(torch::Device device, MicroStepFn micro_step, UpdateFn update);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // Copies `host_batch` (CPU tensors) into its key's static inputs and replays its micro-step
  // graph, capturing it first when the key is new. The loss is valid until that graph's next
  // replay.
  torch::Tensor MicroStep(const TaskBatch& host_batch, int64_t micro, bool first, bool sync);
  // Replays the update graph at learning rate `lr`; returns the norm (valid until the next
  // Update).
  torch::Tensor Update(double lr);

  // Graphs captured so far (micro-step keys + the update graph).
  int64_t captured() const;
  // Seconds spent capturing them (until each new graph's first replay is queued); of those,
  // recording the step's work (the host launching it into the capture), in capture_end (CUDA's
  // graph instantiation) and in the first replay (the graph's upload); and the memory segments
  // (cudaMalloc calls) the captures made for their pool.
  double capture_seconds() const { return capture_seconds_; }
  double record_seconds() const { return record_seconds_; }
  double instantiate_seconds() const { return instantiate_seconds_; }
  double upload_seconds() const { return upload_seconds_; }
  int64_t capture_segments() const { return capture_segments_; }

  // `batch` with both texts of a pair padded to the longer one's length (mask 0, ids 0).
  static TaskBatch PadPairToCommonLength(const TaskBatch& batch);

 private:
  struct Graph;
  struct Pool;
  // Captures fn into graph: on an error inside, the capture is ended before the error goes on
  // (else the stream and the allocator would stay in capture mode).
  torch::Tensor Capture(Graph& graph, const std::function<torch::Tensor()>& fn);
  torch::Device device_;
  std::unique_ptr<Pool> pool_;  // this object's graphs' memory pool
  MicroStepFn micro_step_;
  UpdateFn update_;
  std::map<std::string, std::unique_ptr<Graph>> micro_;
  std::unique_ptr<Graph> update_graph_;
  torch::Tensor lr_;
  double capture_seconds_ = 0;
  double record_seconds_ = 0;
  double instantiate_seconds_ = 0;
  double upload_seconds_ = 0;
  int64_t capture_segments_ = 0;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_STEP_GRAPHS_H_
