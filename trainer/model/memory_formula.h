// Training memory of a BERT trial, estimated before it starts (the formula; torch-free, so that
// hpo checks a sweep's batch sizes before it starts).
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
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_MODEL_MEMORY_FORMULA_H_
#define TUNEFLEET_TRAINER_MODEL_MEMORY_FORMULA_H_

#include <cstdint>
#include <string>

#include "trainer/model/bert_config.h"

namespace tunefleet {
namespace trainer {

struct MemoryEstimate {
  int64_t parameters = 0;
  double model_state_bytes = 0;      // of which:
  double optimizer_state_bytes = 0;  //   the AdamW moments (this rank's share)
  double activation_bytes = 0;
  double total_bytes() const { return model_state_bytes + activation_bytes; }
  // "4.39M parameters x 18 B = 0.07 GiB + activations <= 0.31 GiB (batch 32 x 128 tokens,
  // 2 passes) = 0.38 GiB"; sharded: "... x 12 B (AdamW state 1/2: 0.02 GiB) = ..."
  std::string Describe() const;

  int64_t batch = 0, seq = 0, passes = 0, optimizer_shards = 1;
  double bytes_per_parameter = 0;
};

// `fp32`: fp32 training (else 16-bit mixed precision); `optimizer_shards`: the ranks the AdamW
// state is sharded over (1: not sharded).
MemoryEstimate EstimateTrainingMemoryBytes(const BertConfig& config, int64_t parameters,
                                           int64_t batch, int64_t seq, int passes, bool fp32,
                                           bool grad_checkpointing, int optimizer_shards = 1);

// The least a step of `batch` examples can take, whatever the padding: the estimate at
// kLeastTokens tokens a sequence ([CLS] and [SEP]). A batch whose least exceeds a device's
// memory cannot train there (the trainer's start and hpo's dev-mode check both refuse it).
inline constexpr int64_t kLeastTokens = 2;
MemoryEstimate LeastTrainingMemory(const BertConfig& config, int64_t parameters, int64_t batch,
                                   int passes, bool fp32, bool grad_checkpointing,
                                   int optimizer_shards = 1);

// The parameters of the encoder without its pooler (its model family's ParameterShapes,
// trainer/model/model_family.h): a lower bound of what a task model trains.
int64_t EncoderParameters(const BertConfig& config);

inline double GiB(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_MEMORY_FORMULA_H_
