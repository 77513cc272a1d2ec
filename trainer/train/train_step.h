// One optimizer step of `trainer train` (trainer/train/train_loop.h, "Each step"): the micro-steps'
// forward under autocast and backward (fp16: of the loss times the loss scale), then the
// update: gradients unscaled (fp16), their total norm, a skip on inf/NaN (fp16), clipping to
// train.max_grad_norm, AdamW at the step's rate, gradients set to none.
// Under data parallelism the gradients are averaged across ranks (trainer/distributed/grad_sync.h)
// during the last micro-step's backward; with train.strategy zero1 they are reduce-scattered
// instead, and each rank updates its shard of the parameters and all-gathers the rest
// (trainer/optim/sharded_adamw.h). With CUDA graphs (trainer/train/graph_policy.h) the first step
// runs eagerly and the following ones replay captured micro-steps and update
// (trainer/train/step_graphs.h); if a parameter got no gradient in the first step, the run stays
// eager (a line says so unless quiet).
// Thread-safety: one per training run, used from the training loop's thread.
#ifndef TUNEFLEET_TRAINER_TRAIN_TRAIN_STEP_H_
#define TUNEFLEET_TRAINER_TRAIN_TRAIN_STEP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/config/train_config.h"
#include "trainer/data/task_data.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/model/autocast.h"
#include "trainer/optim/adamw.h"
#include "trainer/optim/loss_scaler.h"
#include "trainer/optim/sharded_adamw.h"
#include "trainer/tasks/task_model.h"
#include "trainer/train/step_graphs.h"

namespace tunefleet {
namespace trainer {

class TrainStep {
 public:
  // `model`: on `device`, in train mode. `group`: null for one process. `graphs_note`: ""
  // to replay CUDA graphs, else why not (WhyNoCudaGraphs). `quiet`: no progress line.
  TrainStep(const TrainConfig& train, const torch::Device& device, Precision precision,
            TaskModel model, comm::ProcessGroup* group, std::string graphs_note, bool quiet);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // Under DDP, gives every rank rank 0's parameters and sets up the gradient buckets; makes the
  // optimizer (sharded under zero1, which moves the parameters into flat buffers) and, with
  // graphs, the StepGraphs. Call once, before Run().
  absl::Status Init();

  // One step of `micro` micro-batches at learning rate `lr`; batch(m) gives micro-batch m's
  // host tensors. Returns the mean loss (a detached device scalar, not waited for).
  absl::StatusOr<torch::Tensor> Run(int64_t micro, const std::function<TaskBatch(int64_t)>& batch,
                                    double lr);

  // The total gradient norm of the last step, before clipping (a device scalar).
  const torch::Tensor& last_norm() const { return last_norm_; }
  // The optimizer: its implementation ("fused", "foreach"); its whole state under AdamW's names
  // (trainer/optim/adamw.h), the same under every strategy: a collective under zero1, where rank 0
  // gets it (as host tensors) and the other ranks an empty map; and the state of a checkpoint
  // (any strategy) restored.
  const char* optimizer_implementation() const;
  absl::StatusOr<std::map<std::string, torch::Tensor>> OptimizerState();
  absl::Status LoadOptimizerState(const std::map<std::string, torch::Tensor>& state);
  // Whether the optimizer state is sharded (zero1 with more than one rank); the bytes of it this
  // rank holds (0 before the first step) and what an unsharded optimizer would hold.
  bool sharded() const { return sharded_ != nullptr; }
  int64_t optimizer_state_bytes() const;
  int64_t unsharded_optimizer_state_bytes() const;
  LossScaler& scaler() { return scaler_; }
  const LossScaler& scaler() const { return scaler_; }
  // Null for one process.
  const GradSync* grad_sync() const { return grad_sync_.get(); }
  // Null when every step runs eagerly (decided before the run or after its first step).
  const StepGraphs* graphs() const { return step_graphs_.get(); }
  bool graphs_planned() const { return graphs_note_.empty(); }
  const std::string& graphs_note() const { return graphs_note_; }
  int64_t num_parameters() const;
  int64_t steps_run() const { return steps_run_; }  // Run() calls in this process

 private:
  // One micro-step of `micro` on `batch` (on the device): gradients zeroed first when `first`,
  // forward, backward of the loss / micro; under DDP the buckets communicate when `sync`
  // (complete after GradSync::Finish). Returns the loss, detached.
  torch::Tensor MicroStep(const TaskBatch& batch, int64_t micro, bool first, bool sync);
  // The gradients this rank's optimizer reads (zero1: its shards), and their global norm.
  std::vector<torch::Tensor> UpdatedGrads() const;
  absl::StatusOr<torch::Tensor> GradNorm(const std::vector<torch::Tensor>& grads);
  // After a step's micro-steps: gradient norm, clipping, AdamW at `lr` on the device (the
  // update StepGraphs captures). Returns the norm.
  torch::Tensor UpdateAt(const torch::Tensor& lr);
  // The eager update after a step's micro-steps (into last_norm_).
  absl::Status EagerUpdate(double lr);
  // Whether this step replays graphs: graphs planned and a step already run in this process
  // with every parameter's gradient and optimizer state in place (else the first replayed step
  // would allocate them inside a capture).
  bool Graphed();

  const TrainConfig& train_;
  torch::Device device_;
  Precision precision_;
  TaskModel model_;
  comm::ProcessGroup* group_;
  std::string graphs_note_;  // why not, or "" when graphs are planned
  bool quiet_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<GradSync> grad_sync_;
  std::unique_ptr<AdamW> optimizer_;       // ddp and one process
  std::unique_ptr<ShardedAdamW> sharded_;  // zero1 with more than one rank
  std::unique_ptr<StepGraphs> step_graphs_;
  LossScaler scaler_;
  int64_t steps_run_ = 0;  // in this process
  torch::Tensor last_norm_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_TRAIN_STEP_H_
