// NVIDIA's management library (NVML, libnvidia-ml.so.1), loaded at run time with dlopen as
// nvidia-smi and pynvml use it, so that nothing links it and every binary runs where it is
// absent. What tunefleet reads from it: each GPU's utilisation, memory, power, temperature and
// energy counter (the agent's telemetry, launcher/agent/gpu_telemetry.h), and the memory NVML
// counts for one process (the trainer's end-of-run memory line).
//
//   std::string why;
//   std::unique_ptr<Nvml> nvml = Nvml::Load(&why);   // null, and `why`, where NVML is absent
//   ASSIGN_OR_RETURN(Nvml::Device gpu, nvml->DeviceByPciBusId(info.pci_bus_id));
//   ASSIGN_OR_RETURN(GpuSample sample, nvml->Sample(gpu));
//
// Thread-safety: NVML's calls are thread-safe; an Nvml may be used from several threads.
#ifndef TUNEFLEET_COMMON_NVML_H_
#define TUNEFLEET_COMMON_NVML_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace tunefleet {

// One reading of one GPU. A figure the GPU does not report (NVML_ERROR_NOT_SUPPORTED: power on
// some boards, the energy counter before Volta) is nullopt.
struct GpuSample {
  double util_pct = 0;      // share of the last sample period a kernel ran (nvidia-smi's GPU-Util)
  double mem_used_mib = 0;  // memory in use on the GPU, every process (nvidia-smi's Memory-Usage)
  double mem_total_mib = 0;
  std::optional<double> power_w;
  std::optional<double> temp_c;
  std::optional<double> energy_j;  // the GPU's energy counter since the driver loaded
};

class Nvml {
 public:
  using Device = void*;  // nvmlDevice_t

  // Loads libnvidia-ml.so.1 (the dynamic loader's search path) and initialises it; null, with
  // `why` set ("libnvidia-ml.so.1 not found", "nvmlInit_v2 failed: ..."), where it cannot.
  static std::unique_ptr<Nvml> Load(std::string* why);
  ~Nvml();  // nvmlShutdown
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The GPU at a PCI bus id as CUDA writes it ("0000:65:00.0"): NotFound naming it otherwise.
  absl::StatusOr<Device> DeviceByPciBusId(const std::string& pci_bus_id) const;
  // Reads utilisation, memory, power, temperature and energy; an error when utilisation or
  // memory cannot be read (the other figures are then optional).
  absl::StatusOr<GpuSample> Sample(Device device) const;
  // The memory NVML accounts to process `pid` on `device` (compute processes), MiB; nullopt when
  // it lists no such process (another pid namespace, or no CUDA context there).
  std::optional<double> ProcessMemoryMib(Device device, int pid) const;

 private:
  struct Api;
  Nvml(void* lib, std::unique_ptr<Api> api);
  std::string Error(int code) const;
  // Adds power, temperature and energy, where the GPU reports them, to a sample.
  GpuSample FinishSample(Device device, GpuSample sample) const;

  void* lib_;
  std::unique_ptr<Api> api_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_NVML_H_
