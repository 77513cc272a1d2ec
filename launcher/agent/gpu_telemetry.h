// The agent's GPU telemetry: every second it samples each of its GPUs through NVML
// (common/nvml.h) and adds each sample to the usage of the run whose rank holds that GPU's slot
// (GpuUsageMeter), which the agent sends to the head as Telemetry (comm/proto/messages.proto).
//
//   std::string why;
//   std::unique_ptr<GpuTelemetry> telemetry = GpuTelemetry::Start(gpus, &why);  // null: `why`
//   for (const SlotSample& s : telemetry->Sample()) meters[owner[s.slot]].Add(s, absl::Now());
//
// A GPU is found in NVML by its PCI bus id (CUDA and NVML may number GPUs differently). A run's
// energy is its GPUs' energy counters' rise between its first and last samples (the agent samples
// when a run starts and just before its Exit), or power integrated over time where a GPU has no
// counter.
// Thread-safety: not thread-safe; the agent's poll loop owns it.
#ifndef TUNEFLEET_LAUNCHER_AGENT_GPU_TELEMETRY_H_
#define TUNEFLEET_LAUNCHER_AGENT_GPU_TELEMETRY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "common/gpu_detect.h"
#include "common/nvml.h"

namespace tunefleet {
namespace launcher {

// One GPU's sample.
struct SlotSample {
  int slot = 0;
  GpuSample gpu;
  // The run's share of the GPU's energy and power since its previous sample: 1 / the trials
  // on the GPU (resources.trials_per_gpu), 1 for a GPU of its own.
  double share = 1;
};

class GpuTelemetry {
 public:
  // Loads NVML and finds each of `gpus` (slot i = gpus[i]) in it. Null, with `why`, when NVML is
  // absent or knows none of them; a GPU it does not know is left out (and named in `why`).
  static std::unique_ptr<GpuTelemetry> Start(const std::vector<GpuInfo>& gpus, std::string* why);

  // Samples every GPU it knows; a GPU whose sample fails is left out this time.
  std::vector<SlotSample> Sample();
  int gpus() const { return static_cast<int>(devices_.size()); }
  // Slot `slot`'s GPU memory now (used and total, MiB), and what NVML accounts to process
  // `pid` there (MiB); nullopt where the GPU is not tracked, or NVML cannot say.
  std::optional<GpuSample> SampleSlot(int slot);
  std::optional<double> ProcessMib(int slot, int pid) const;

 private:
  struct Tracked {
    int slot = 0;
    Nvml::Device device = nullptr;
  };
  explicit GpuTelemetry(std::unique_ptr<Nvml> nvml) : nvml_(std::move(nvml)) {}

  std::unique_ptr<Nvml> nvml_;
  std::vector<Tracked> devices_;
};

// A run's GPU usage on this agent, from the samples of the slots its ranks hold.
class GpuUsageMeter {
 public:
  // A GPU's sample as the run starts: only where its energy counter (or power) starts from. Its
  // utilisation covers the time before the run, so it does not count.
  void Baseline(const SlotSample& sample, absl::Time taken);
  // Adds one GPU's sample. Samples taken at one time (one Sample() call) are "the latest".
  void Add(const SlotSample& sample, absl::Time taken);
  bool empty() const { return samples_ == 0; }
  comm::GpuUsage Usage() const;

 private:
  struct Slot {
    std::optional<double> last_counter_j;  // the energy counter at the previous sample
    double counted_j = 0;                  // the counter's rises, each times its share
    double integrated_j = 0;               // power x time x share, for a GPU without a counter
    std::optional<double> last_power_w;
    absl::Time last = absl::InfinitePast();
  };
  // Energy: the counter's rise, or power x time, since the slot's previous sample, times the
  // sample's share.
  void AddEnergy(Slot& slot, const SlotSample& sample, absl::Time taken);

  int samples_ = 0;
  double util_sum_ = 0;
  double mem_peak_mib_ = 0;
  std::map<int, Slot> slots_;
  absl::Time latest_ = absl::InfinitePast();
  int latest_count_ = 0;
  double latest_util_sum_ = 0;
  double latest_mem_mib_ = 0;
  double latest_power_w_ = 0;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_GPU_TELEMETRY_H_
