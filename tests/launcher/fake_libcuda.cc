// A fake CUDA driver for tests on machines without GPUs: built as libcuda.so.1 and put first
// on LD_LIBRARY_PATH, it is what common/gpu_detect.cc dlopens. It implements only the five
// calls DetectGpus makes and reports TUNEFLEET_FAKE_GPUS devices (0 when unset), named
// "Fake GPU <i>", at PCI bus id "0000:<i+1, 2 hex digits>:00.0" (where the fake NVML,
// fake_libnvml.cc, finds them); no process ever runs CUDA work on them. Tests of the agent's GPU
// path (one GPU per rank through CUDA_VISIBLE_DEVICES, trial packing) use it in CI.
#include <cstdio>
#include <cstdlib>

namespace {

int FakeCount() {
  const char* v = std::getenv("TUNEFLEET_FAKE_GPUS");
  return v == nullptr ? 0 : std::atoi(v);
}

constexpr int kSuccess = 0;          // CUDA_SUCCESS
constexpr int kInvalidValue = 1;     // CUDA_ERROR_INVALID_VALUE
constexpr int kInvalidDevice = 101;  // CUDA_ERROR_INVALID_DEVICE

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned int /*flags*/) { return kSuccess; }

__attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  if (count == nullptr) return kInvalidValue;
  *count = FakeCount();
  return kSuccess;
}

__attribute__((visibility("default"))) int cuDeviceGet(int* device, int ordinal) {
  if (device == nullptr) return kInvalidValue;
  if (ordinal < 0 || ordinal >= FakeCount()) return kInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

__attribute__((visibility("default"))) int cuDeviceGetName(char* name, int len, int device) {
  if (name == nullptr || len <= 0) return kInvalidValue;
  if (device < 0 || device >= FakeCount()) return kInvalidDevice;
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", device);
  return kSuccess;
}

__attribute__((visibility("default"))) int cuDeviceGetPCIBusId(char* bus_id, int len, int device) {
  if (bus_id == nullptr || len <= 0) return kInvalidValue;
  if (device < 0 || device >= FakeCount()) return kInvalidDevice;
  std::snprintf(bus_id, static_cast<size_t>(len), "0000:%02x:00.0", device + 1);
  return kSuccess;
}

}  // extern "C"
