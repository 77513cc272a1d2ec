#include "trainer/model/memory_formula.h"

#include "absl/strings/str_format.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {

std::string MemoryEstimate::Describe() const {
  const std::string sharded = optimizer_shards > 1
                                  ? absl::StrFormat(" (AdamW state 1/%d: %.2f GiB)",
                                                    optimizer_shards, GiB(optimizer_state_bytes))
                                  : "";
  return absl::StrFormat(
      "%.2fM parameters x %.4g B%s = %.2f GiB + activations <= %.2f GiB (batch %d x %d tokens, "
      "%d pass%s) = %.2f GiB",
      static_cast<double>(parameters) / 1e6, bytes_per_parameter, sharded, GiB(model_state_bytes),
      GiB(activation_bytes), batch, seq, passes, passes == 1 ? "" : "es", GiB(total_bytes()));
}

MemoryEstimate EstimateTrainingMemoryBytes(const BertConfig& config, int64_t parameters,
                                           int64_t batch, int64_t seq, int passes, bool fp32,
                                           bool grad_checkpointing, int optimizer_shards) {
  MemoryEstimate e;
  e.parameters = parameters;
  e.batch = batch;
  e.seq = seq;
  e.passes = passes;
  e.optimizer_shards = optimizer_shards < 1 ? 1 : optimizer_shards;
  const double moments = 8.0 / static_cast<double>(e.optimizer_shards);
  e.bytes_per_parameter = (fp32 ? 8.0 : 10.0) + moments;
  e.model_state_bytes = static_cast<double>(parameters) * e.bytes_per_parameter;
  e.optimizer_state_bytes = static_cast<double>(parameters) * moments;
  const double b = static_cast<double>(batch), t = static_cast<double>(seq);
  const double h = static_cast<double>(config.hidden_size);
  const double a = static_cast<double>(config.num_attention_heads);
  const double layers = static_cast<double>(config.num_hidden_layers);
  const double width = fp32 ? 2.0 : 1.0;  // the formula counts 16-bit activations
  const double full_layer = b * t * h * (34.0 + 5.0 * a * t / h) * width;
  const double per_pass =
      grad_checkpointing ? layers * 2.0 * b * t * h * width + full_layer : layers * full_layer;
  e.activation_bytes = per_pass * static_cast<double>(passes);
  return e;
}

MemoryEstimate LeastTrainingMemory(const BertConfig& config, int64_t parameters, int64_t batch,
                                   int passes, bool fp32, bool grad_checkpointing,
                                   int optimizer_shards) {
  return EstimateTrainingMemoryBytes(config, parameters, batch, kLeastTokens, passes, fp32,
                                     grad_checkpointing, optimizer_shards);
}

int64_t EncoderParameters(const BertConfig& config) {
  int64_t total = 0;
  for (const auto& [name, shape] :
       FamilyOf(config).ParameterShapes(config, /*with_pooler=*/false)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    total += n;
  }
  return total;
}

}  // namespace trainer
}  // namespace tunefleet
