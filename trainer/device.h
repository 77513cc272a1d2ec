// Which device a trainer rank computes on: cuda:LOCAL_RANK when this LibTorch has CUDA and a
// GPU is visible, else the CPU. Also describes the LibTorch build for `trainer --version`.
#ifndef TUNEFLEET_TRAINER_DEVICE_H_
#define TUNEFLEET_TRAINER_DEVICE_H_

#include <string>

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

struct DeviceInfo {
  torch::Device device{torch::kCPU};
  int cuda_device_count = 0;
  std::string name;  // "cpu" or the GPU's name
};

// `local_rank` < 0 means "not under a launcher" (use GPU 0).
DeviceInfo SelectDevice(int local_rank);

// Makes `device` the current CUDA device of this thread (NCCL and new tensors use it); no-op for
// the CPU.
void MakeCurrent(const torch::Device& device);

// "LibTorch 2.11.0 (CUDA 13.0, NCCL 2.28.9)" or "LibTorch 1.13.1 (CPU, Gloo)".
std::string DescribeLibTorch();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DEVICE_H_
