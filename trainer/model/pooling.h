// Sentence embeddings from token states, as sentence-transformers' Pooling module computes them:
//   mean: sum of the states of real tokens / their count (count clamped to >= 1e-9),
//   cls:  the state of the first token,
//   max:  per dimension, the max over real tokens (padded positions set to -1e9 first).
// `last_hidden_state` is [B, T, H] (any float dtype, any device), `attention_mask` [B, T] with 1
// for real tokens and 0 for padding (any dtype). Differentiable. MaskPrompt makes the mask of
// Pooling(include_prompt=False), which pools a text without the prompt it starts with.
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_MODEL_POOLING_H_
#define TUNEFLEET_TRAINER_MODEL_POOLING_H_

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

enum class Pooling { kMean, kCls, kMax };

// "mean" | "cls" | "max" (the names of the trainer YAML's model.pooling).
absl::StatusOr<Pooling> ParsePooling(absl::string_view name);
const char* PoolingName(Pooling pooling);

torch::Tensor Pool(const torch::Tensor& last_hidden_state, const torch::Tensor& attention_mask,
                   Pooling pooling);

// `attention_mask` [B, T] with its first `prompt_length` columns zeroed (all T when it has
// fewer), as sentence-transformers' Pooling with include_prompt false and prompt_length (which
// counts [CLS]): a copy; `attention_mask` itself when prompt_length <= 0. For pooling only, not
// for the encoder's attention. cls pooling ignores the mask.
torch::Tensor MaskPrompt(const torch::Tensor& attention_mask, int64_t prompt_length);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_POOLING_H_
