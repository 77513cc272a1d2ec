#include "trainer/device.h"

#include <torch/cuda.h>
#include <torch/version.h>

#include "absl/strings/str_cat.h"

#ifdef TUNEFLEET_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

namespace tunefleet {
namespace trainer {

DeviceInfo SelectDevice(int local_rank) {
  DeviceInfo info;
  info.cuda_device_count = static_cast<int>(torch::cuda::device_count());
  if (info.cuda_device_count > 0) {
    const int index = local_rank < 0 ? 0 : local_rank % info.cuda_device_count;
    info.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
#ifdef TUNEFLEET_CUDA
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, index) == cudaSuccess) {
      info.name = prop.name;
    } else {
      info.name = "cuda";
    }
#else
    info.name = "cuda";
#endif
  } else {
    info.device = torch::Device(torch::kCPU);
    info.name = "cpu";
  }
  return info;
}

void MakeCurrent(const torch::Device& device) {
#ifdef TUNEFLEET_CUDA
  if (device.is_cuda()) c10::cuda::set_device(device.index());
#else
  (void)device;
#endif
}

std::string DescribeLibTorch() {
  std::string out = absl::StrCat("LibTorch ", TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR, ".",
                                 TORCH_VERSION_PATCH);
#ifdef TUNEFLEET_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  absl::StrAppend(&out, " (CUDA ", runtime / 1000, ".", (runtime % 1000) / 10, ", NCCL ",
                  NCCL_MAJOR, ".", NCCL_MINOR, ".", NCCL_PATCH, ")");
#else
  absl::StrAppend(&out, " (CPU, Gloo)");
#endif
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
