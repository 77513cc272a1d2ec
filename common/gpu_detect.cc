#include "common/gpu_detect.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tunefleet {
namespace {

using CuInit = int (*)(unsigned int);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetPciBusId = int (*)(char*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);

}  // namespace

std::vector<GpuInfo> DetectGpus(std::string* why) {
  std::vector<GpuInfo> gpus;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    if (why != nullptr) *why = "no CUDA driver (libcuda.so.1 not found)";
    return gpus;
  }
  auto init = reinterpret_cast<CuInit>(::dlsym(lib, "cuInit"));
  auto count_fn = reinterpret_cast<CuDeviceGetCount>(::dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(::dlsym(lib, "cuDeviceGet"));
  auto name_fn = reinterpret_cast<CuDeviceGetName>(::dlsym(lib, "cuDeviceGetName"));
  auto bus_fn = reinterpret_cast<CuDeviceGetPciBusId>(::dlsym(lib, "cuDeviceGetPCIBusId"));
  auto mem_fn = reinterpret_cast<CuDeviceTotalMem>(::dlsym(lib, "cuDeviceTotalMem_v2"));
  int count = 0;
  if (init == nullptr || count_fn == nullptr || get == nullptr || name_fn == nullptr) {
    if (why != nullptr) *why = "libcuda.so.1 lacks the device API";
  } else if (int rc = init(0); rc != 0) {
    if (why != nullptr) *why = absl::StrCat("cuInit failed with CUDA error ", rc);
  } else if (count_fn(&count) != 0 || count == 0) {
    if (why != nullptr) *why = "the CUDA driver reports no GPU";
    count = 0;
  }
  std::vector<std::string> visible;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v != nullptr) {
    visible = absl::StrSplit(v, ',', absl::SkipWhitespace());
  }
  for (int i = 0; i < count; ++i) {
    GpuInfo gpu;
    gpu.id = i < static_cast<int>(visible.size()) ? visible[i] : std::to_string(i);
    int device = 0;
    char name[256] = {0};
    if (get(&device, i) == 0 && name_fn(name, sizeof(name), device) == 0) gpu.name = name;
    char bus[32] = {0};
    if (bus_fn != nullptr && bus_fn(bus, sizeof(bus), device) == 0) gpu.pci_bus_id = bus;
    size_t bytes = 0;
    if (mem_fn != nullptr && mem_fn(&bytes, device) == 0)
      gpu.total_bytes = static_cast<int64_t>(bytes);
    gpus.push_back(gpu);
  }
  // The driver stays loaded: unloading it under a live CUDA context is unsafe and it is tiny.
  return gpus;
}

}  // namespace tunefleet
