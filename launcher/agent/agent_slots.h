// The agent's slots, the run that holds each, and its GPUs' telemetry per run.
//
// A slot is one of the GPUs the agent uses: those this host shows (common/gpu_detect.h), kept
// by --gpu_ids or less --exclude_gpu_ids (launcher/host_filter.h's SelectGpus), at most
// --slots of them; or, on a host without GPUs, one of --slots CPU slots (default 1). Each slot
// is free or held from a run's Assign (or from the start of its staging) until its Exit: by one
// run, or, for one-rank runs that allow it (TrialSpec.trials_per_gpu), by several at once while
// their memory estimates fit (gpu_share.h). On GPUs, NVML telemetry (gpu_telemetry.h), when it
// loads, samples the slots' GPUs every second: each GPU's sample goes to the runs holding its slot
// (LocalRun::gpu_usage), as it starts (a baseline for its energy) and before its Exit too.
//
// Thread-safety: the agent's poll loop only.
#ifndef TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_
#define TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "common/gpu_detect.h"
#include "launcher/agent/gpu_telemetry.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {

class AgentSlots {
 public:
  // Detects the GPUs and starts their telemetry (logging what it found); `max_slots` 0: all the
  // GPUs, or 1 CPU slot. An error for a GPU id past those this host shows.
  static absl::StatusOr<std::unique_ptr<AgentSlots>> Detect(
      int max_slots, const std::vector<int>& gpu_ids, const std::vector<int>& exclude_gpu_ids);

  int count() const { return static_cast<int>(tenants_.size()); }
  // The GPUs this host shows that the agent uses (slot i is gpus()[i]); empty on CPU slots.
  const std::vector<GpuInfo>& gpus() const { return gpus_; }

  using Seats = RunSeats;  // local_run.h
  // Chooses and holds slots for run `run_id` with `ranks` local ranks, or nullopt when none
  // fits now (`why` says what it waits for). A run of one rank whose spec allows
  // trials_per_gpu N > 1 takes a free GPU if there is one, else a seat on the GPU with the
  // fewest trials whose every trial allows one more and whose memory fits (gpu_share.h; by
  // seats alone where NVML is absent); any other run, and every run on CPU slots, takes slots
  // of its own. `runs` gives the tenants' processes, whose memory NVML counts.
  std::optional<Seats> Take(uint64_t run_id, const comm::TrialSpec& spec, int ranks,
                            const std::map<uint64_t, LocalRun>& runs, std::string* why);
  void Release(uint64_t run_id);

  // True when telemetry runs and a sample of every GPU is due at `now`.
  bool SampleDue(absl::Time now) const { return telemetry_ != nullptr && now >= next_sample_; }
  // Adds each GPU's sample to the runs (of `runs`) on its slot; returns those runs' ids.
  std::set<uint64_t> SampleAll(absl::Time now, std::map<uint64_t, LocalRun>& runs);
  // Samples the GPUs of the slots run `run_id` holds into `run`: `baseline` as it starts.
  void SampleRun(uint64_t run_id, LocalRun& run, bool baseline);

 private:
  struct Tenant {
    uint64_t run_id = 0;
    int share = 1;  // the most trials its GPU may hold (1: the GPU is its own)
    int seat = 0;
    double estimate_mib = 0;
  };
  static constexpr absl::Duration kSampleInterval = absl::Seconds(1);
  AgentSlots() = default;
  void StartTelemetry();
  bool Holds(int slot, uint64_t run_id) const;
  // Whether slot `slot` (shared, not free) takes one more trial of `share` and `estimate_mib`.
  bool SeatFits(int slot, int share, double estimate_mib, const std::map<uint64_t, LocalRun>& runs,
                std::string* why);

  std::vector<GpuInfo> gpus_;
  std::vector<std::vector<Tenant>> tenants_;  // per slot
  std::unique_ptr<GpuTelemetry> telemetry_;   // null: no GPUs, or no NVML
  absl::Time next_sample_ = absl::InfinitePast();
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_AGENT_SLOTS_H_
