#include "launcher/agent/agent_slots.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "launcher/agent/gpu_share.h"
#include "launcher/host_filter.h"

namespace tunefleet {
namespace launcher {

absl::StatusOr<std::unique_ptr<AgentSlots>> AgentSlots::Detect(
    int max_slots, const std::vector<int>& gpu_ids, const std::vector<int>& exclude_gpu_ids) {
  std::unique_ptr<AgentSlots> slots(new AgentSlots());
  std::string why;
  slots->gpus_ = DetectGpus(&why);
  if (!gpu_ids.empty() || !exclude_gpu_ids.empty()) {
    absl::StatusOr<std::vector<GpuInfo>> selected =
        SelectGpus(slots->gpus_, gpu_ids, exclude_gpu_ids);
    if (!selected.ok()) return selected.status();
    slots->gpus_ = *std::move(selected);
  }
  int count = 0;
  if (!slots->gpus_.empty()) {
    count = static_cast<int>(slots->gpus_.size());
    if (max_slots > 0) count = std::min(count, max_slots);
    TF_LOG(INFO) << "using " << count << " of " << slots->gpus_.size()
                 << " GPU(s): " << slots->gpus_[0].name;
  } else {
    count = max_slots > 0 ? max_slots : 1;
    TF_LOG(INFO) << why << "; running " << count << " CPU slot(s)";
  }
  slots->tenants_.assign(static_cast<size_t>(count), {});
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
    TF_LOG(INFO) << "GPU telemetry: sampling " << telemetry_->gpus()
                 << " GPU(s) through NVML every " << absl::FormatDuration(kSampleInterval)
                 << (why.empty() ? "" : absl::StrCat("; left out: ", why));
  }
}

std::optional<AgentSlots::Seats> AgentSlots::Take(uint64_t run_id, const comm::TrialSpec& spec,
                                                  int ranks,
                                                  const std::map<uint64_t, LocalRun>& runs,
                                                  std::string* why) {
  // CPU slots are not shared: a slot's cores (OMP_NUM_THREADS) are one trial's.
  const int share = ranks == 1 && !gpus_.empty() ? std::max(1, spec.trials_per_gpu()) : 1;
  Seats seats;
  for (int s = 0; s < count() && static_cast<int>(seats.slots.size()) < ranks; ++s) {
    if (tenants_[static_cast<size_t>(s)].empty()) seats.slots.push_back(s);
  }
  if (static_cast<int>(seats.slots.size()) < ranks && share > 1) {
    // No free GPU: a seat on the least shared GPU that takes one more and has the memory.
    std::vector<int> order;
    for (int s = 0; s < count(); ++s) order.push_back(s);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return tenants_[static_cast<size_t>(a)].size() < tenants_[static_cast<size_t>(b)].size();
    });
    std::string last_why = "every GPU holds as many trials as its trials allow";
    for (int s : order) {
      if (SeatFits(s, share, spec.memory_mib(), runs, &last_why)) {
        seats.slots = {s};
        break;
      }
    }
    if (seats.slots.empty()) {
      if (why != nullptr) *why = last_why;
      return std::nullopt;
    }
  } else if (static_cast<int>(seats.slots.size()) < ranks) {
    if (why != nullptr) {
      *why = absl::StrCat(seats.slots.size(), " GPU(s) free of ", ranks, " needed, alone");
    }
    return std::nullopt;
  }
  for (int s : seats.slots) {
    std::vector<Tenant>& on = tenants_[static_cast<size_t>(s)];
    int seat = 0;
    while (std::any_of(on.begin(), on.end(), [&](const Tenant& t) { return t.seat == seat; })) {
      ++seat;
    }
    on.push_back({run_id, share, seat, spec.memory_mib()});
    seats.lanes.push_back(s + count() * seat);
    seats.sharing = static_cast<int>(on.size());
  }
  return seats;
}

bool AgentSlots::SeatFits(int slot, int share, double estimate_mib,
                          const std::map<uint64_t, LocalRun>& runs, std::string* why) {
  const std::vector<Tenant>& on = tenants_[static_cast<size_t>(slot)];
  const int n = static_cast<int>(on.size());
  if (n == 0 || n >= share) return false;
  for (const Tenant& t : on) {
    if (t.share <= n) return false;  // it allows no more company
  }
  if (telemetry_ == nullptr) return true;  // by seats alone
  const std::optional<GpuSample> gpu = telemetry_->SampleSlot(slot);
  if (!gpu.has_value()) return true;
  std::vector<ShareTenant> sharing;
  for (const Tenant& t : on) {
    ShareTenant st;
    st.estimate_mib = t.estimate_mib;
    auto it = runs.find(t.run_id);
    if (it != runs.end()) {
      for (const LocalRank& r : it->second.ranks) {
        if (r.process != nullptr) st.used_mib = telemetry_->ProcessMib(slot, r.process->pid());
      }
    }
    sharing.push_back(st);
  }
  const ShareDecision d = DecideShare(estimate_mib, gpu->mem_total_mib - gpu->mem_used_mib,
                                      gpu->mem_total_mib, sharing);
  if (!d.fits && why != nullptr) *why = absl::StrCat("GPU ", slot, "'s memory: ", d.why);
  return d.fits;
}

bool AgentSlots::Holds(int slot, uint64_t run_id) const {
  const std::vector<Tenant>& on = tenants_[static_cast<size_t>(slot)];
  return std::any_of(on.begin(), on.end(), [&](const Tenant& t) { return t.run_id == run_id; });
}

void AgentSlots::Release(uint64_t run_id) {
  for (std::vector<Tenant>& on : tenants_) {
    on.erase(
        std::remove_if(on.begin(), on.end(), [&](const Tenant& t) { return t.run_id == run_id; }),
        on.end());
  }
}

std::set<uint64_t> AgentSlots::SampleAll(absl::Time now, std::map<uint64_t, LocalRun>& runs) {
  next_sample_ = now + kSampleInterval;
  std::set<uint64_t> sampled;
  for (SlotSample s : telemetry_->Sample()) {
    const std::vector<Tenant>& on = tenants_[static_cast<size_t>(s.slot)];
    s.share = on.empty() ? 1.0 : 1.0 / static_cast<double>(on.size());
    for (const Tenant& t : on) {
      auto it = runs.find(t.run_id);
      if (it == runs.end()) continue;
      it->second.gpu_usage.Add(s, now);
      sampled.insert(t.run_id);
    }
  }
  return sampled;
}

void AgentSlots::SampleRun(uint64_t run_id, LocalRun& run, bool baseline) {
  if (telemetry_ == nullptr) return;
  const absl::Time now = absl::Now();
  for (SlotSample s : telemetry_->Sample()) {
    if (!Holds(s.slot, run_id)) continue;
    s.share = 1.0 / static_cast<double>(tenants_[static_cast<size_t>(s.slot)].size());
    if (baseline) {
      run.gpu_usage.Baseline(s, now);
    } else {
      run.gpu_usage.Add(s, now);
    }
  }
}

}  // namespace launcher
}  // namespace tunefleet
