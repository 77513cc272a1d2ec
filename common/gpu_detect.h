// The GPUs this process can use (the agent's slots, the trainer's device), found through the
// CUDA driver API loaded at run time (dlopen libcuda.so.1), so nothing links CUDA for it and it
// runs on CPU-only machines too.
// Honours CUDA_VISIBLE_DEVICES: device i of the result is the i-th visible GPU, and `id` is
// what a child's CUDA_VISIBLE_DEVICES must say to see exactly that GPU.
#ifndef TUNEFLEET_COMMON_GPU_DETECT_H_
#define TUNEFLEET_COMMON_GPU_DETECT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet {

struct GpuInfo {
  std::string id;    // for CUDA_VISIBLE_DEVICES ("0", "3", or a UUID as the parent listed it)
  std::string name;  // "NVIDIA H200"
  // "0000:65:00.0" (cuDeviceGetPCIBusId): how NVML finds the same GPU (common/nvml.h), whatever
  // order CUDA and NVML number them in. Empty when the driver would not say.
  std::string pci_bus_id;
  int64_t total_bytes = 0;  // its memory (cuDeviceTotalMem); 0 when the driver would not say
};

// Empty when there is no driver or no GPU. `why` (optional) says which.
std::vector<GpuInfo> DetectGpus(std::string* why = nullptr);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_GPU_DETECT_H_
