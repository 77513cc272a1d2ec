#include "common/nvml.h"

#include <dlfcn.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// nvml.h's values and layouts, for the calls used here (stable across NVML versions).
constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;
constexpr int kTemperatureGpu = 0;
constexpr unsigned long long kValueNotAvailable = ~0ULL;
constexpr double kMiB = 1024.0 * 1024.0;

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct MemoryV2 {  // nvmlMemory_v2_t
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): the struct's size and its version in the top byte.
constexpr unsigned int kMemoryV2 = static_cast<unsigned int>(sizeof(MemoryV2)) | (2U << 24U);
struct ProcessInfo {  // nvmlProcessInfo_t, as the _v2 and _v3 calls fill it
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

}  // namespace

struct Nvml::Api {
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*by_pci_bus_id)(const char*, Device*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  int (*memory_v2)(Device, MemoryV2*) = nullptr;                    // optional
  int (*power)(Device, unsigned int*) = nullptr;                    // optional
  int (*temperature)(Device, int, unsigned int*) = nullptr;         // optional
  int (*energy)(Device, unsigned long long*) = nullptr;             // optional
  int (*processes)(Device, unsigned int*, ProcessInfo*) = nullptr;  // optional
};

std::unique_ptr<Nvml> Nvml::Load(std::string* why) {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    if (why != nullptr) *why = "libnvidia-ml.so.1 not found";
    return nullptr;
  }
  const auto sym = [lib](const char* name) { return ::dlsym(lib, name); };
  auto init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  auto api = std::make_unique<Api>();
  api->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  api->error_string = reinterpret_cast<const char* (*)(int)>(sym("nvmlErrorString"));
  api->by_pci_bus_id =
      reinterpret_cast<int (*)(const char*, Device*)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  api->utilization =
      reinterpret_cast<int (*)(Device, Utilization*)>(sym("nvmlDeviceGetUtilizationRates"));
  api->memory = reinterpret_cast<int (*)(Device, Memory*)>(sym("nvmlDeviceGetMemoryInfo"));
  api->memory_v2 = reinterpret_cast<int (*)(Device, MemoryV2*)>(sym("nvmlDeviceGetMemoryInfo_v2"));
  api->power = reinterpret_cast<int (*)(Device, unsigned int*)>(sym("nvmlDeviceGetPowerUsage"));
  api->temperature =
      reinterpret_cast<int (*)(Device, int, unsigned int*)>(sym("nvmlDeviceGetTemperature"));
  api->energy = reinterpret_cast<int (*)(Device, unsigned long long*)>(
      sym("nvmlDeviceGetTotalEnergyConsumption"));
  void* processes = sym("nvmlDeviceGetComputeRunningProcesses_v3");
  if (processes == nullptr) processes = sym("nvmlDeviceGetComputeRunningProcesses_v2");
  api->processes = reinterpret_cast<int (*)(Device, unsigned int*, ProcessInfo*)>(processes);
  if (init == nullptr || api->shutdown == nullptr || api->by_pci_bus_id == nullptr ||
      api->utilization == nullptr || api->memory == nullptr) {
    if (why != nullptr) *why = "libnvidia-ml.so.1 lacks the calls needed (nvmlInit_v2 and others)";
    ::dlclose(lib);
    return nullptr;
  }
  if (const int rc = init(); rc != kSuccess) {
    if (why != nullptr) {
      *why = absl::StrCat(
          "nvmlInit_v2 failed: ", api->error_string != nullptr ? api->error_string(rc) : "",
          " (NVML error ", rc, ")");
    }
    ::dlclose(lib);
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(lib, std::move(api)));
}

Nvml::Nvml(void* lib, std::unique_ptr<Api> api) : lib_(lib), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  ::dlclose(lib_);
}

std::string Nvml::Error(int code) const {
  const char* text = api_->error_string != nullptr ? api_->error_string(code) : nullptr;
  return absl::StrCat(text != nullptr ? text : "error", " (NVML error ", code, ")");
}

absl::StatusOr<Nvml::Device> Nvml::DeviceByPciBusId(const std::string& pci_bus_id) const {
  Device device = nullptr;
  if (const int rc = api_->by_pci_bus_id(pci_bus_id.c_str(), &device); rc != kSuccess) {
    return absl::NotFoundError(
        absl::StrCat("NVML has no GPU at PCI bus id '", pci_bus_id, "': ", Error(rc)));
  }
  return device;
}

absl::StatusOr<GpuSample> Nvml::Sample(Device device) const {
  GpuSample sample;
  Utilization util{};
  if (const int rc = api_->utilization(device, &util); rc != kSuccess) {
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetUtilizationRates: ", Error(rc)));
  }
  sample.util_pct = util.gpu;
  // Used as nvidia-smi counts it: neither free nor reserved for the driver and firmware
  // (nvmlMemory_v2_t says how much that is; the old call's `used` includes it, ~0.5 GiB on an
  // H100).
  MemoryV2 v2{};
  v2.version = kMemoryV2;
  if (api_->memory_v2 != nullptr && api_->memory_v2(device, &v2) == kSuccess) {
    const unsigned long long unused = v2.reserved + v2.free;
    sample.mem_used_mib =
        static_cast<double>(v2.total >= unused ? v2.total - unused : v2.used) / kMiB;
    sample.mem_total_mib = static_cast<double>(v2.total) / kMiB;
    return FinishSample(device, sample);
  }
  Memory memory{};
  if (const int rc = api_->memory(device, &memory); rc != kSuccess) {
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetMemoryInfo: ", Error(rc)));
  }
  sample.mem_used_mib = static_cast<double>(memory.used) / kMiB;
  sample.mem_total_mib = static_cast<double>(memory.total) / kMiB;
  return FinishSample(device, sample);
}

GpuSample Nvml::FinishSample(Device device, GpuSample sample) const {
  unsigned int value = 0;
  if (api_->power != nullptr && api_->power(device, &value) == kSuccess) {
    sample.power_w = value / 1000.0;  // milliwatts
  }
  if (api_->temperature != nullptr &&
      api_->temperature(device, kTemperatureGpu, &value) == kSuccess) {
    sample.temp_c = value;
  }
  unsigned long long energy = 0;
  if (api_->energy != nullptr && api_->energy(device, &energy) == kSuccess) {
    sample.energy_j = static_cast<double>(energy) / 1000.0;  // millijoules
  }
  return sample;
}

std::optional<double> Nvml::ProcessMemoryMib(Device device, int pid) const {
  if (api_->processes == nullptr) return std::nullopt;
  std::vector<ProcessInfo> infos(64);
  for (int attempt = 0; attempt < 3; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const int rc = api_->processes(device, &count, infos.data());
    if (rc == kInsufficientSize) {
      infos.resize(count + 16);
      continue;
    }
    if (rc != kSuccess) return std::nullopt;
    for (unsigned int i = 0; i < count && i < infos.size(); ++i) {
      if (static_cast<int>(infos[i].pid) != pid) continue;
      if (infos[i].used_gpu_memory == kValueNotAvailable) return std::nullopt;
      return static_cast<double>(infos[i].used_gpu_memory) / kMiB;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tunefleet
