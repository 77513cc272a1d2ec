// ZeRO stage 1 (Rajbhandari et al., SC 2020; DeepSpeed's `zero_optimization.stage: 1`): the
// AdamW state of a data-parallel job is sharded across its ranks.
//   - The gradients come from a GradSync built with GradReduce::kReduceScatter: each bucket is
//     split into world-size equal parts, and rank r receives the mean gradient of part r only.
//   - Rank r updates part r of every bucket's parameters with AdamW (trainer/optim/adamw.h, torch's
//     arithmetic). AdamW is elementwise, so a part's update is the slice of the full update;
//     rank r keeps the moments of its parts only: 8 bytes per parameter / world size.
//   - Every rank's updated parts are then all-gathered into every rank's parameters.
// The parameters live in one flat buffer per bucket, laid out as GradSync's gradient buffer (the
// all-gather's destination): the constructor copies them there and points each parameter at
// its place (set_data), as DeepSpeed flattens its parameters. Build it before anything keeps
// the parameters' data pointers (optimizers, CUDA graphs).
// Clipping needs the norm of the whole gradient: GradNorm() adds the ranks' squared shard norms
// with one all-reduce, so every rank clips (and, with fp16, skips) alike.
// Checkpoints hold the whole state under AdamW's names: StateDict() gathers it, bucket by
// bucket, to rank 0's host memory, and LoadStateDict() takes this rank's parts of a whole
// state. A checkpoint written under zero1 therefore resumes under ddp or in one process, and the
// other way round, with any number of ranks.
// Thread-safety: one per rank, used from the training thread.
#ifndef TUNEFLEET_TRAINER_OPTIM_SHARDED_ADAMW_H_
#define TUNEFLEET_TRAINER_OPTIM_SHARDED_ADAMW_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/distributed/grad_sync.h"
#include "trainer/optim/adamw.h"

namespace tunefleet {
namespace trainer {

class ShardedAdamW {
 public:
  // `grads`: built with GradReduce::kReduceScatter over `params` on `group`; both outlive this.
  ShardedAdamW(comm::ProcessGroup* group, const GradSync& grads, std::vector<torch::Tensor> params,
               AdamWOptions options);

  // This rank's parts of the mean gradients, one per bucket (after GradSync::Finish()).
  const std::vector<torch::Tensor>& shard_grads() const { return shard_grads_; }
  // The total 2-norm of the whole mean gradient, the same on every rank (a collective): a
  // float32 scalar on the parameters' device.
  absl::StatusOr<torch::Tensor> GradNorm();

  // AdamW on this rank's parts at `lr` (or at the device scalar `lr`: AdamW::StepWithDeviceLr),
  // then the parameters all-gathered. Collectives: every rank steps, or none.
  absl::Status Step(double lr);
  absl::Status StepWithDeviceLr(const torch::Tensor& lr);
  bool fused() const { return shards_->fused(); }
  const char* implementation() const { return shards_->implementation(); }

  // Bytes of optimizer state this rank holds (0 before the first step), and what one
  // unsharded optimizer holds for the same parameters.
  int64_t state_bytes() const;
  int64_t unsharded_state_bytes() const;

  // The whole state, under AdamW's names ("<i>.exp_avg", ... for parameter i), as host tensors
  // on rank 0 and an empty map on the others. A collective.
  absl::StatusOr<std::map<std::string, torch::Tensor>> StateDict();
  // Keeps this rank's parts of a whole state (AdamW::StateDict()'s names and shapes, from any
  // strategy or world size). The parameters of one bucket must share a step count.
  absl::Status LoadStateDict(const std::map<std::string, torch::Tensor>& state);

 private:
  struct Bucket {
    torch::Tensor flat;            // the parameters, padded
    std::vector<size_t> params;    // indices into params_, in layout order
    std::vector<int64_t> offsets;  // each one's offset in `flat`
    int64_t part = 0;              // elements per rank
  };
  absl::Status Gather();  // every rank's parts into every rank's parameters

  comm::ProcessGroup* group_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<torch::Tensor> shard_params_, shard_grads_;  // one per bucket
  std::unique_ptr<AdamW> shards_;                          // AdamW over shard_params_
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_OPTIM_SHARDED_ADAMW_H_
