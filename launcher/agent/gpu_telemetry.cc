#include "launcher/agent/gpu_telemetry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace launcher {

std::unique_ptr<GpuTelemetry> GpuTelemetry::Start(const std::vector<GpuInfo>& gpus,
                                                  std::string* why) {
  std::string load_error;
  std::unique_ptr<Nvml> nvml = Nvml::Load(&load_error);
  if (nvml == nullptr) {
    if (why != nullptr) *why = load_error;
    return nullptr;
  }
  std::unique_ptr<GpuTelemetry> telemetry(new GpuTelemetry(std::move(nvml)));
  std::string missing;
  for (size_t i = 0; i < gpus.size(); ++i) {
    absl::StatusOr<Nvml::Device> device =
        gpus[i].pci_bus_id.empty() ? absl::NotFoundError("the CUDA driver gave no PCI bus id")
                                   : telemetry->nvml_->DeviceByPciBusId(gpus[i].pci_bus_id);
    if (!device.ok()) {
      absl::StrAppend(&missing, missing.empty() ? "" : "; ", "GPU ", i, ": ",
                      device.status().message());
      continue;
    }
    Tracked tracked;
    tracked.slot = static_cast<int>(i);
    tracked.device = *device;
    telemetry->devices_.push_back(tracked);
  }
  if (why != nullptr) *why = missing;
  if (telemetry->devices_.empty()) return nullptr;
  return telemetry;
}

std::optional<GpuSample> GpuTelemetry::SampleSlot(int slot) {
  for (const Tracked& t : devices_) {
    if (t.slot != slot) continue;
    absl::StatusOr<GpuSample> sample = nvml_->Sample(t.device);
    if (sample.ok()) return *sample;
  }
  return std::nullopt;
}

std::optional<double> GpuTelemetry::ProcessMib(int slot, int pid) const {
  for (const Tracked& t : devices_) {
    if (t.slot == slot) return nvml_->ProcessMemoryMib(t.device, pid);
  }
  return std::nullopt;
}

std::vector<SlotSample> GpuTelemetry::Sample() {
  std::vector<SlotSample> out;
  for (Tracked& t : devices_) {
    absl::StatusOr<GpuSample> sample = nvml_->Sample(t.device);
    if (!sample.ok()) continue;
    SlotSample s;
    s.slot = t.slot;
    s.gpu = *sample;
    out.push_back(s);
  }
  return out;
}

void GpuUsageMeter::Baseline(const SlotSample& sample, absl::Time taken) {
  AddEnergy(slots_[sample.slot], sample, taken);
}

void GpuUsageMeter::AddEnergy(Slot& slot, const SlotSample& sample, absl::Time taken) {
  if (sample.gpu.energy_j.has_value()) {
    if (slot.last_counter_j.has_value()) {
      slot.counted_j += std::max(0.0, *sample.gpu.energy_j - *slot.last_counter_j) * sample.share;
    }
    slot.last_counter_j = sample.gpu.energy_j;
  } else if (sample.gpu.power_w.has_value() && slot.last_power_w.has_value()) {
    // The trapezoid between this sample and the previous one.
    slot.integrated_j += 0.5 * (*sample.gpu.power_w + *slot.last_power_w) *
                         absl::ToDoubleSeconds(taken - slot.last) * sample.share;
  }
  slot.last_power_w = sample.gpu.power_w;
  slot.last = taken;
}

void GpuUsageMeter::Add(const SlotSample& sample, absl::Time taken) {
  ++samples_;
  util_sum_ += sample.gpu.util_pct;
  mem_peak_mib_ = std::max(mem_peak_mib_, sample.gpu.mem_used_mib);
  AddEnergy(slots_[sample.slot], sample, taken);
  if (taken != latest_) {
    latest_ = taken;
    latest_count_ = 0;
    latest_util_sum_ = latest_mem_mib_ = latest_power_w_ = 0;
  }
  ++latest_count_;
  latest_util_sum_ += sample.gpu.util_pct;
  latest_mem_mib_ = std::max(latest_mem_mib_, sample.gpu.mem_used_mib);
  latest_power_w_ += sample.gpu.power_w.value_or(0) * sample.share;
}

comm::GpuUsage GpuUsageMeter::Usage() const {
  comm::GpuUsage usage;
  usage.set_samples(samples_);
  if (samples_ == 0) return usage;
  usage.set_util_mean(util_sum_ / samples_);
  usage.set_mem_peak_mib(mem_peak_mib_);
  double energy_j = 0;
  for (const auto& [index, slot] : slots_) {
    energy_j += slot.counted_j + slot.integrated_j;
  }
  usage.set_energy_j(energy_j);
  usage.set_util_now(latest_util_sum_ / latest_count_);
  usage.set_mem_now_mib(latest_mem_mib_);
  usage.set_power_now_w(latest_power_w_);
  return usage;
}

}  // namespace launcher
}  // namespace tunefleet
