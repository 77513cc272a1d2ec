// A fake NVML for tests on machines without GPUs: built as libnvidia-ml.so.1 and put first on
// LD_LIBRARY_PATH beside the fake libcuda.so.1 (fake_libcuda.cc), it is what common/nvml.cc
// dlopens. It knows the fake driver's GPUs by their PCI bus ids ("0000:0I:00.0" for GPU I) and
// reports fixed, distinct figures per GPU, so a test can tell whose samples a trial got:
//   utilisation 10 * (I + 1) + TUNEFLEET_FAKE_NVML_UTIL (default 0) %, memory used
//   1000 + 100 * I MiB of TUNEFLEET_FAKE_NVML_TOTAL_MIB (default 81559) MiB, power 100 + 10 * I W,
//   temperature 40 + I C, and an energy counter that grows at the GPU's power in real time since
//   nvmlInit_v2.
// TUNEFLEET_FAKE_NVML_FAIL=1 makes nvmlInit_v2 fail (NVML_ERROR_DRIVER_NOT_LOADED).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotFound = 6;
constexpr int kDriverNotLoaded = 9;

int FakeCount() {
  const char* v = std::getenv("TUNEFLEET_FAKE_GPUS");
  return v == nullptr ? 0 : std::atoi(v);
}

int ExtraUtil() {
  const char* v = std::getenv("TUNEFLEET_FAKE_NVML_UTIL");
  return v == nullptr ? 0 : std::atoi(v);
}

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double g_init_time = 0;
// A device handle is the address of one of these.
int g_devices[64];

// The GPU a handle stands for, or -1.
int Index(void* device) {
  for (int i = 0; i < 64; ++i) {
    if (device == &g_devices[i]) return i < FakeCount() ? i : -1;
  }
  return -1;
}

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

}  // namespace

extern "C" {

#define EXPORT __attribute__((visibility("default")))

EXPORT int nvmlInit_v2() {
  const char* fail = std::getenv("TUNEFLEET_FAKE_NVML_FAIL");
  if (fail != nullptr && std::strcmp(fail, "1") == 0) return kDriverNotLoaded;
  g_init_time = Now();
  return kSuccess;
}

EXPORT int nvmlShutdown() { return kSuccess; }

EXPORT const char* nvmlErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "Success";
    case kInvalidArgument:
      return "Invalid Argument";
    case kNotFound:
      return "Not Found";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** device) {
  if (bus_id == nullptr || device == nullptr) return kInvalidArgument;
  for (int i = 0; i < FakeCount() && i < 64; ++i) {
    char mine[32];
    std::snprintf(mine, sizeof(mine), "0000:%02x:00.0", i + 1);
    if (strcasecmp(bus_id, mine) == 0) {
      *device = &g_devices[i];
      return kSuccess;
    }
  }
  return kNotFound;
}

EXPORT int nvmlDeviceGetUtilizationRates(void* device, Utilization* util) {
  const int i = Index(device);
  if (i < 0 || util == nullptr) return kInvalidArgument;
  util->gpu = static_cast<unsigned int>(10 * (i + 1) + ExtraUtil());
  util->memory = 5;
  return kSuccess;
}

EXPORT int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  const int i = Index(device);
  if (i < 0 || memory == nullptr) return kInvalidArgument;
  constexpr unsigned long long kMiB = 1024ULL * 1024ULL;
  const char* total = std::getenv("TUNEFLEET_FAKE_NVML_TOTAL_MIB");
  memory->total = (total != nullptr ? std::strtoull(total, nullptr, 10) : 81559ULL) * kMiB;
  memory->used = (1000ULL + 100ULL * static_cast<unsigned long long>(i)) * kMiB;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

EXPORT int nvmlDeviceGetPowerUsage(void* device, unsigned int* milliwatts) {
  const int i = Index(device);
  if (i < 0 || milliwatts == nullptr) return kInvalidArgument;
  *milliwatts = static_cast<unsigned int>((100 + 10 * i) * 1000);
  return kSuccess;
}

EXPORT int nvmlDeviceGetTemperature(void* device, int /*sensor*/, unsigned int* celsius) {
  const int i = Index(device);
  if (i < 0 || celsius == nullptr) return kInvalidArgument;
  *celsius = static_cast<unsigned int>(40 + i);
  return kSuccess;
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* millijoules) {
  const int i = Index(device);
  if (i < 0 || millijoules == nullptr) return kInvalidArgument;
  *millijoules = static_cast<unsigned long long>((Now() - g_init_time) * (100 + 10 * i) * 1000);
  return kSuccess;
}

}  // extern "C"
