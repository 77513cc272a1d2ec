// Training memory of a BERT trial, estimated before it starts (the formula:
// trainer/model/memory_formula.h) and measured after it ends.
//
// Estimate (seed document 004; Korthikanti et al. 2022 for the activations):
//   model state: mixed precision + AdamW = 18 bytes per parameter (fp32 weights 4, gradients 4,
//                Adam moments 8, a 16-bit working copy 2); fp32 training 16 bytes. Under
//                ZeRO-1 over N ranks (trainer/optim/sharded_adamw.h) each rank holds 8 / N bytes of
//                moments per parameter: 10 + 8 / N, fp32 8 + 8 / N
//   activations: per layer and encoder pass, B * T * H * (34 + 5 * A * T / H) bytes in 16-bit
//                (twice that in fp32); with gradient checkpointing only each layer's input
//                (2 B * T * H bytes, 4 in fp32) is kept, plus one layer's full set
//                during its recomputation. Passes: 2 for the tasks that encode both sentences
//                (sts, mnrl, nli), 1 for classification. T is the maximum sequence length, so
//                the activations are an upper bound under dynamic padding.
// Measured: on CUDA the caching allocator's peak of allocated bytes; on the CPU the process's
// peak resident set (getrusage).
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_TRAIN_MEMORY_ESTIMATE_H_
#define TUNEFLEET_TRAINER_TRAIN_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "absl/status/status.h"

#include "trainer/model/autocast.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/memory_formula.h"

namespace tunefleet {
namespace trainer {

// `optimizer_shards`: the ranks the AdamW state is sharded over (1: not sharded).
MemoryEstimate EstimateTrainingMemory(const BertConfig& config, int64_t parameters, int64_t batch,
                                      int64_t seq, int passes, Precision precision,
                                      bool grad_checkpointing, int optimizer_shards = 1);

// Whether `batch` examples a step can fit `device` at all: the estimate at 2 tokens a sequence
// (a lower bound, whatever the padding) against the device's memory (the GPU's, or this host's
// RAM on the CPU). InvalidArgument naming train.batch_size when it cannot; OK when the memory
// is unknown.
absl::Status CheckBatchCanFit(const BertConfig& config, int64_t parameters, int64_t batch,
                              int passes, Precision precision, bool grad_checkpointing,
                              int optimizer_shards, const torch::Device& device);

// Resets the peak statistic (CUDA only; the CPU's peak RSS cannot be reset).
void ResetPeakMemory(const torch::Device& device);
// Bytes; 0 when unknown.
double PeakMemoryBytes(const torch::Device& device);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_MEMORY_ESTIMATE_H_
