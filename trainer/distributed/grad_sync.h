// Data-parallel gradient averaging, as torch.nn.parallel.DistributedDataParallel's reducer does
// it (Li et al., VLDB 2020):
//   - the parameters go into buckets in reverse order of registration (about the order in which
//     backward produces their gradients), of at most `bucket_bytes` each (the first at most
//     1 MiB, so that communication starts early);
//   - each parameter's gradient is a view into its bucket's flat buffer (gradient_as_bucket_view:
//     no copies), so the optimizer reads the averaged gradients in place;
//   - a hook after each parameter's gradient accumulation marks it ready; when a bucket is
//     complete, its mean all-reduce starts (NCCL's AVG; divide-then-sum on Gloo), buckets always in
//     the same order on every rank, while backward goes on computing earlier layers' gradients;
//   - on gradient-accumulation micro-steps (set_sync(false)) nothing is communicated: the
//     gradients accumulate locally and the last micro-step's backward sends their sum.
// Finish() after the synchronizing backward starts any bucket still waiting (parameters that got
// no gradient contribute zeros) and waits for all; then every rank holds the same mean gradient.
// With a communication dtype other than the gradients' (bf16, as DDP's bf16_compress_hook), each
// bucket is cast into a persistent buffer of that dtype, averaged there, and cast back in
// Finish(): half the bytes on the wire, the mean rounded to bf16. NCCL only: Gloo, which has no
// bf16 all-reduce, sends the gradients' own dtype.
// The gradient accumulators get their hooks at construction, and the autograd engine runs them
// on the stream current then: build the GradSync on the stream the steps run on (a side stream
// for CUDA-graph capture, as PyTorch's DDP asks).
// For ZeRO (trainer/optim/sharded_adamw.h), GradReduce::kReduceScatter pads each bucket to a
// multiple of the world size and reduce-scatters it instead: after Finish() only this rank's equal
// part of each bucket (its shard) holds the mean; the rest of the buffer is unspecified. Parameters
// must be float tensors on one device; pass only parameters the loss uses. Thread-safety: hooks run
// on autograd threads under an internal lock; the other methods from the training thread, between
// backward passes.
#ifndef TUNEFLEET_TRAINER_DISTRIBUTED_GRAD_SYNC_H_
#define TUNEFLEET_TRAINER_DISTRIBUTED_GRAD_SYNC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "absl/status/status.h"
#include "comm/process_group.h"

namespace tunefleet {
namespace trainer {

inline constexpr int64_t kDefaultBucketBytes = 25 * 1024 * 1024;  // DDP's bucket_cap_mb = 25
inline constexpr int64_t kFirstBucketBytes = 1024 * 1024;

enum class GradReduce { kAllReduce, kReduceScatter };

class GradSync {
 public:
  GradSync(comm::ProcessGroup* group, std::vector<torch::Tensor> params,
           int64_t bucket_bytes = kDefaultBucketBytes,
           c10::optional<torch::ScalarType> comm_dtype = c10::nullopt,
           GradReduce reduce = GradReduce::kAllReduce);
  ~GradSync();
  GradSync(const GradSync&) = delete;
  GradSync& operator=(const GradSync&) = delete;

  // Rank 0's parameter values to every rank (call once, before training).
  absl::Status BroadcastParameters();
  // Zeroes the gradients (the bucket buffers); call before a step's first backward.
  void ZeroGrads();
  // Whether the next backward communicates (true on the last micro-step of a step).
  void set_sync(bool on);
  // Whether buckets start from the hooks during backward (default), or all in Finish() (no
  // overlap: a diagnostic of how much the overlap hides).
  void set_overlap(bool on);
  // After the synchronizing backward: completes every bucket's all-reduce. With `after_bucket`,
  // calls it with each bucket's index as soon as that bucket's mean gradient is in place (in
  // bucket order), while later buckets may still be in flight: an optimizer can step those
  // parameters (bucket_params) then, hiding the last buckets' communication.
  absl::Status Finish(const std::function<void(int64_t)>& after_bucket = nullptr);

  int64_t num_buckets() const;
  // Parameter indices (into the constructor's vector) of bucket b, in bucket order.
  const std::vector<size_t>& bucket_params(int64_t b) const;
  // Bucket b's flat gradient buffer: its parameters' gradients back to back in bucket_params(b)'s
  // order, then (kReduceScatter) zeros up to a multiple of the world size.
  const torch::Tensor& bucket_buffer(int64_t b) const;

  struct State;  // implementation (shared with the autograd hooks)

 private:
  std::shared_ptr<State> state_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keeps the hooks alive
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DISTRIBUTED_GRAD_SYNC_H_
