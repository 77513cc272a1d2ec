#include "trainer/model/positions.h"

#include <cmath>
#include <limits>

namespace tunefleet {
namespace trainer {
namespace {

// torch.finfo(dtype).min, which transformers puts at masked positions.
double LowestValue(torch::ScalarType dtype) {
  switch (dtype) {
    case torch::kHalf:
      return -65504.0;
    case torch::kBFloat16:
      return -3.3895313892515355e38;
    case torch::kDouble:
      return std::numeric_limits<double>::lowest();
    default:
      return std::numeric_limits<float>::lowest();
  }
}

}  // namespace

torch::Tensor PaddedPositionIds(const torch::Tensor& input_ids, int64_t pad_token_id) {
  const torch::Tensor mask = input_ids.ne(pad_token_id).to(torch::kLong);
  return mask.cumsum(1).mul(mask).add(pad_token_id);
}

torch::Tensor RelativePositionBuckets(int64_t length, const torch::Device& device) {
  const auto options = torch::TensorOptions().dtype(torch::kLong).device(device);
  const torch::Tensor positions = torch::arange(length, options);
  // n = -(memory - context) = context - memory, context (the query) along rows.
  torch::Tensor n = positions.unsqueeze(1) - positions.unsqueeze(0);
  const int64_t half = kRelativePositionBuckets / 2;
  const torch::Tensor sign_bucket = n.lt(0).to(torch::kLong).mul(half);
  n = n.abs();
  const int64_t max_exact = half / 2;
  // As transformers computes it, in float32: max_exact + log(n / max_exact) /
  // log(max_distance / max_exact) * (half - max_exact), truncated; n >= max_exact where it counts
  // (clamped so that log never sees 0).
  const torch::Tensor large =
      (torch::log(n.clamp_min(1).to(torch::kFloat) / static_cast<double>(max_exact)) /
       std::log(static_cast<double>(kRelativeMaxDistance) / static_cast<double>(max_exact)) *
       static_cast<double>(half - max_exact))
          .to(torch::kLong)
          .add(max_exact)
          .clamp_max(half - 1);
  return sign_bucket + torch::where(n.lt(max_exact), n, large);
}

torch::Tensor RelativePositionBias(torch::nn::Embedding& table, int64_t length) {
  return table(RelativePositionBuckets(length, table->weight.device()))
      .permute({2, 0, 1})
      .unsqueeze(0)
      .contiguous();  // keys along the last dimension, as the fused attention kernels want
}

torch::Tensor AttentionBias(const torch::Tensor& mask, const torch::Tensor& position_bias,
                            torch::ScalarType dtype) {
  torch::Tensor bias;
  if (mask.defined()) {
    bias = (1.0 - mask.to(dtype)).mul(LowestValue(dtype)).unsqueeze(1).unsqueeze(2);
  }
  if (!position_bias.defined()) return bias;
  // Added before the padding bias, as transformers' MPNetSelfAttention adds them.
  const torch::Tensor relative = position_bias.to(dtype);
  return bias.defined() ? relative + bias : relative;
}

}  // namespace trainer
}  // namespace tunefleet
