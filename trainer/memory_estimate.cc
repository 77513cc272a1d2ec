#include "trainer/memory_estimate.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#ifdef TUNEFLEET_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "absl/strings/str_cat.h"
#include "common/gpu_detect.h"
#include "absl/strings/str_format.h"

namespace tunefleet {
namespace trainer {

std::string MemoryEstimate::Describe() const {
  const std::string sharded =
      optimizer_shards > 1 ? absl::StrFormat(" (AdamW state 1/%d: %.2f GiB)", optimizer_shards,
                                             GiB(optimizer_state_bytes))
                           : "";
  return absl::StrFormat(
      "%.2fM parameters x %.4g B%s = %.2f GiB + activations <= %.2f GiB (batch %d x %d tokens, "
      "%d pass%s) = %.2f GiB",
      static_cast<double>(parameters) / 1e6, bytes_per_parameter, sharded, GiB(model_state_bytes),
      GiB(activation_bytes), batch, seq, passes, passes == 1 ? "" : "es", GiB(total_bytes()));
}

MemoryEstimate EstimateTrainingMemory(const BertConfig& config, int64_t parameters,
                                      int64_t batch, int64_t seq, int passes,
                                      Precision precision, bool grad_checkpointing,
                                      int optimizer_shards) {
  MemoryEstimate e;
  e.parameters = parameters;
  e.batch = batch;
  e.seq = seq;
  e.passes = passes;
  const bool fp32 = precision == Precision::kFp32;
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
  const double per_pass = grad_checkpointing ? layers * 2.0 * b * t * h * width + full_layer
                                             : layers * full_layer;
  e.activation_bytes = per_pass * static_cast<double>(passes);
  return e;
}

void ResetPeakMemory(const torch::Device& device) {
#ifdef TUNEFLEET_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#else
  (void)device;
#endif
}

double PeakMemoryBytes(const torch::Device& device) {
#ifdef TUNEFLEET_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return static_cast<double>(stats.allocated_bytes[0].peak);  // 0: aggregate pool
  }
#endif
  (void)device;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<double>(usage.ru_maxrss) * 1024.0;
}

absl::Status CheckBatchCanFit(const BertConfig& config, int64_t parameters, int64_t batch,
                              int passes, Precision precision, bool grad_checkpointing,
                              int optimizer_shards, const torch::Device& device) {
  double memory = 0;
  std::string what;
  if (device.is_cuda()) {
    const std::vector<GpuInfo> gpus = DetectGpus();
    const int index = device.has_index() ? device.index() : 0;
    if (index < 0 || index >= static_cast<int>(gpus.size())) return absl::OkStatus();
    memory = static_cast<double>(gpus[index].total_bytes);
    what = absl::StrCat("the GPU's ", absl::StrFormat("%.1f", GiB(memory)), " GiB (",
                        gpus[index].name, ")");
  } else {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) memory = static_cast<double>(pages) * static_cast<double>(page);
    what = absl::StrCat("this host's ", absl::StrFormat("%.1f", GiB(memory)), " GiB of RAM");
  }
  if (memory <= 0) return absl::OkStatus();
  const MemoryEstimate least = EstimateTrainingMemory(config, parameters, batch, /*seq=*/2,
                                                      passes, precision, grad_checkpointing,
                                                      optimizer_shards);
  if (least.total_bytes() <= memory) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "train.batch_size: ", batch, " examples a step need at least ",
      absl::StrFormat("%.1f", GiB(least.total_bytes())),
      " GiB even at 2 tokens a sequence (the memory estimate), more than ", what));
}

}  // namespace trainer
}  // namespace tunefleet
