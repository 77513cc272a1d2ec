#include "launcher/agent/agent_slots.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "launcher/host_filter.h"

namespace tunefleet {
namespace launcher {

absl::StatusOr<std::unique_ptr<AgentSlots>> AgentSlots::Detect(
    int max_slots, const std::vector<int>& gpu_ids, const std::vector<int>& exclude_gpu_ids) {
  std::unique_ptr<AgentSlots> slots(new AgentSlots());
  std::string why;
  slots->gpus_ = DetectGpus(&why);
  if (!gpu_ids.empty() || !exclude_gpu_ids.empty()) {
    absl::StatusOr<std::vector<GpuInfo>> selected = SelectGpus(slots->gpus_, gpu_ids, exclude_gpu_ids);
    if (!selected.ok()) return selected.status();
    slots->gpus_ = *std::move(selected);
  }
  int count = 0;
  if (!slots->gpus_.empty()) {
    count = static_cast<int>(slots->gpus_.size());
    if (max_slots > 0) count = std::min(count, max_slots);
    TF_LOG(INFO) << "using " << count << " of " << slots->gpus_.size() << " GPU(s): " << slots->gpus_[0].name;
  } else {
    count = max_slots > 0 ? max_slots : 1;
    TF_LOG(INFO) << why << "; running " << count << " CPU slot(s)";
  }
  slots->owners_.assign(static_cast<size_t>(count), 0);
  if (!slots->gpus_.empty()) slots->StartTelemetry();
  return slots;
}

void AgentSlots::StartTelemetry() {
  std::string why;
  const std::vector<GpuInfo> mine(gpus_.begin(), gpus_.begin() + count());
  telemetry_ = GpuTelemetry::Start(mine, &why);
  if (telemetry_ == nullptr) {
    TF_LOG(INFO) << "no GPU telemetry (" << why << "); trials run without it";
  } else {
    TF_LOG(INFO) << "GPU telemetry: sampling " << telemetry_->gpus() << " GPU(s) through NVML every "
                 << absl::FormatDuration(kSampleInterval)
                 << (why.empty() ? "" : absl::StrCat("; left out: ", why));
  }
}

std::vector<int> AgentSlots::Free() const {
  std::vector<int> free;
  for (int s = 0; s < count(); ++s) {
    if (owners_[static_cast<size_t>(s)] == 0) free.push_back(s);
  }
  return free;
}

void AgentSlots::Hold(const std::vector<int>& slots, uint64_t run_id) {
  for (int s : slots) owners_[static_cast<size_t>(s)] = run_id;
}

void AgentSlots::Release(uint64_t run_id) {
  for (uint64_t& owner : owners_) {
    if (owner == run_id) owner = 0;
  }
}

std::set<uint64_t> AgentSlots::SampleAll(absl::Time now, std::map<uint64_t, LocalRun>& runs) {
  next_sample_ = now + kSampleInterval;
  std::set<uint64_t> sampled;
  for (const SlotSample& s : telemetry_->Sample()) {
    const uint64_t owner = owners_[static_cast<size_t>(s.slot)];
    auto it = runs.find(owner);
    if (owner == 0 || it == runs.end()) continue;
    it->second.gpu_usage.Add(s, now);
    sampled.insert(owner);
  }
  return sampled;
}

void AgentSlots::SampleRun(uint64_t run_id, LocalRun& run, bool baseline) {
  if (telemetry_ == nullptr) return;
  const absl::Time now = absl::Now();
  for (const SlotSample& s : telemetry_->Sample()) {
    if (owners_[static_cast<size_t>(s.slot)] != run_id) continue;
    if (baseline) {
      run.gpu_usage.Baseline(s, now);
    } else {
      run.gpu_usage.Add(s, now);
    }
  }
}

}  // namespace launcher
}  // namespace tunefleet
