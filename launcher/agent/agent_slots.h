// The agent's slots, the run that holds each, and its GPUs' telemetry per run.
//
// A slot is one of the GPUs the agent uses: those this host shows (common/gpu_detect.h), kept
// by --gpu_ids or less --exclude_gpu_ids (launcher/host_filter.h's SelectGpus), at most
// --slots of them; or, on a host without GPUs, one of --slots CPU slots (default 1). Each slot
// is free or held by one run (its id) from its Assign (or from the start of its staging) until
// its Exit. On GPUs, NVML telemetry (gpu_telemetry.h), when it loads, samples the slots' GPUs
// every second: each GPU's sample goes to the run holding its slot (LocalRun::gpu_usage), as it
// starts (a baseline for its energy) and before its Exit too.
//
// Thread-safety: the agent's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/gpu_detect.h"
#include "launcher/agent/gpu_telemetry.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {

class AgentSlots {
 public:
  // Detects the GPUs and starts their telemetry (logging what it found); `max_slots` 0: all the
  // GPUs, or 1 CPU slot. An error for a GPU id past those this host shows.
  static absl::StatusOr<std::unique_ptr<AgentSlots>> Detect(int max_slots,
                                                            const std::vector<int>& gpu_ids,
                                                            const std::vector<int>& exclude_gpu_ids);

  int count() const { return static_cast<int>(owners_.size()); }
  // The GPUs this host shows that the agent uses (slot i is gpus()[i]); empty on CPU slots.
  const std::vector<GpuInfo>& gpus() const { return gpus_; }
  // The run id per slot, 0 for a free one (RankLauncher::Spawn marks the slots it takes).
  std::vector<uint64_t>& owners() { return owners_; }
  std::vector<int> Free() const;
  void Hold(const std::vector<int>& slots, uint64_t run_id);
  void Release(uint64_t run_id);

  // True when telemetry runs and a sample of every GPU is due at `now`.
  bool SampleDue(absl::Time now) const { return telemetry_ != nullptr && now >= next_sample_; }
  // Adds each GPU's sample to the run (of `runs`) holding its slot; returns those runs' ids.
  std::set<uint64_t> SampleAll(absl::Time now, std::map<uint64_t, LocalRun>& runs);
  // Samples the GPUs of the slots run `run_id` holds into `run`: `baseline` as it starts.
  void SampleRun(uint64_t run_id, LocalRun& run, bool baseline);

 private:
  static constexpr absl::Duration kSampleInterval = absl::Seconds(1);
  AgentSlots() = default;
  void StartTelemetry();

  std::vector<GpuInfo> gpus_;
  std::vector<uint64_t> owners_;
  std::unique_ptr<GpuTelemetry> telemetry_;  // null: no GPUs, or no NVML
  absl::Time next_sample_ = absl::InfinitePast();
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_
