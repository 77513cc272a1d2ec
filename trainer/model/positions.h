// Positions and padding as the shared encoder (trainer/model/bert_model.h) feeds them to its
// embeddings and attention, beyond BERT's position ids 0, 1, 2, ...:
//   - padded position ids (RoBERTa, MPNet): transformers' create_position_ids_from_input_ids,
//     mask = ids != pad, ids = cumsum(mask) * mask + pad: a token's id is pad + 1 + the number of
//     non-padding tokens before it, padding's is pad;
//   - relative position buckets (MPNet): MPNetEncoder.relative_position_bucket over the positions
//     0..T-1 as compute_position_bias calls it (32 buckets, max distance 128): half the buckets
//     for each sign of memory - context, exact up to 8 apart, logarithmic up to 128, the last
//     bucket beyond; the bias of a bucket is a row of encoder.relative_attention_bias, one value
//     per head, added to the attention scores of every layer;
//   - the additive attention bias: relative position bias + padding bias ((1 - mask) * the lowest
//     value of the compute dtype, as transformers builds it), passed to SDPA as its mask.
// Both are computed on the inputs' device without host synchronization (CUDA graphs capture them).
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_MODEL_POSITIONS_H_
#define TUNEFLEET_TRAINER_MODEL_POSITIONS_H_

#include <cstdint>

#include <torch/nn/modules/embedding.h>
#include <torch/types.h>

namespace tunefleet {
namespace trainer {

// transformers' MPNet: the bucket count compute_position_bias passes, and the distance from
// which all positions share the last bucket of their sign.
inline constexpr int64_t kRelativePositionBuckets = 32;
inline constexpr int64_t kRelativeMaxDistance = 128;

// int64 [B, T] ids -> int64 [B, T] position ids.
torch::Tensor PaddedPositionIds(const torch::Tensor& input_ids, int64_t pad_token_id);

// int64 [T, T]: the bucket of (query i, key j), on `device`.
torch::Tensor RelativePositionBuckets(int64_t length, const torch::Device& device);
// The bias of the buckets of `length` positions from `table` [buckets, heads]: [1, heads, T, T].
torch::Tensor RelativePositionBias(torch::nn::Embedding& table, int64_t length);

// [B, T] attention mask (1 = attend, 0 = padding) and [1, heads, T, T] position bias, either
// undefined -> their additive bias in `dtype` ([B, 1, 1, T], [1, heads, T, T] or their sum
// [B, heads, T, T]); undefined when both are.
torch::Tensor AttentionBias(const torch::Tensor& mask, const torch::Tensor& position_bias,
                            torch::ScalarType dtype);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_POSITIONS_H_
