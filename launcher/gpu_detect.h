// The GPUs this node's agent can hand out, found through the CUDA driver API loaded at run
// time (dlopen libcuda.so.1), so the agent links no CUDA and runs on CPU-only machines too.
// Honours CUDA_VISIBLE_DEVICES: device i of the result is the i-th visible GPU, and `id` is
// what a child's CUDA_VISIBLE_DEVICES must say to see exactly that GPU.
#ifndef TUNEFLEET_LAUNCHER_GPU_DETECT_H_
#define TUNEFLEET_LAUNCHER_GPU_DETECT_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace launcher {

struct GpuInfo {
  std::string id;    // for CUDA_VISIBLE_DEVICES ("0", "3", or a UUID as the parent listed it)
  std::string name;  // "NVIDIA H200"
};

// Empty when there is no driver or no GPU. `why` (optional) says which.
std::vector<GpuInfo> DetectGpus(std::string* why = nullptr);

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_GPU_DETECT_H_
