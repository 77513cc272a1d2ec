#include "trainer/train/memory_estimate.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#ifdef TUNEFLEET_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/gpu_detect.h"

namespace tunefleet {
namespace trainer {

MemoryEstimate EstimateTrainingMemory(const BertConfig& config, int64_t parameters, int64_t batch,
                                      int64_t seq, int passes, Precision precision,
                                      bool grad_checkpointing, int optimizer_shards) {
  return EstimateTrainingMemoryBytes(config, parameters, batch, seq, passes,
                                     precision == Precision::kFp32, grad_checkpointing,
                                     optimizer_shards);
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
  const MemoryEstimate least =
      LeastTrainingMemory(config, parameters, batch, passes, precision == Precision::kFp32,
                          grad_checkpointing, optimizer_shards);
  if (least.total_bytes() <= memory) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("train.batch_size: ", batch, " examples a step need at least ",
                   absl::StrFormat("%.1f", GiB(least.total_bytes())), " GiB even at ", kLeastTokens,
                   " tokens a sequence (the memory estimate), more than ", what));
}

}  // namespace trainer
}  // namespace tunefleet
