#include "trainer/model/pooling.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "trainer/model/enum_names.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr EnumName<Pooling> kPoolingNames[] = {
    {Pooling::kMean, "mean"}, {Pooling::kCls, "cls"}, {Pooling::kMax, "max"}};

}  // namespace

absl::StatusOr<Pooling> ParsePooling(absl::string_view name) {
  if (std::optional<Pooling> pooling = EnumFromName(kPoolingNames, name)) return *pooling;
  return absl::InvalidArgumentError(
      absl::StrCat("pooling \"", name, "\" is not one of mean, cls, max"));
}

const char* PoolingName(Pooling pooling) {
  return NameOfEnum(kPoolingNames, pooling, /*unknown=*/"?");
}

torch::Tensor Pool(const torch::Tensor& last_hidden_state, const torch::Tensor& attention_mask,
                   Pooling pooling) {
  if (pooling == Pooling::kCls) return last_hidden_state.select(1, 0);
  const torch::Tensor mask =
      attention_mask.unsqueeze(-1).expand(last_hidden_state.sizes()).to(last_hidden_state.dtype());
  if (pooling == Pooling::kMax) {
    return std::get<0>(last_hidden_state.masked_fill(mask == 0, -1e9).max(1));
  }
  const torch::Tensor sum = (last_hidden_state * mask).sum(1);
  return sum / mask.sum(1).clamp_min(1e-9);
}

torch::Tensor MaskPrompt(const torch::Tensor& attention_mask, int64_t prompt_length) {
  if (prompt_length <= 0) return attention_mask;
  torch::Tensor out = attention_mask.clone();
  out.narrow(1, 0, std::min(prompt_length, out.size(1))).zero_();
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
