#include "hpo/running_trials.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/clip.h"
#include "hpo/config/sweep_plan.h"

namespace tunefleet {
namespace hpo {

std::string RankZeroWorker(const comm::Started& s) {
  for (int i = 0; i < s.workers_size(); ++i) {
    if (s.ranks_size() == 0 ? i == 0 : (i < s.ranks_size() && s.ranks(i) == 0)) {
      return s.workers(i);
    }
  }
  return "";
}

int StartedCount(const RunningTrials& running) {
  int started = 0;
  for (const auto& [number, run] : running) started += run.started != absl::InfinitePast();
  return started;
}

std::optional<GpuTotals> CombinedGpuUsage(const RunningTrial& run) {
  int64_t samples = 0;
  GpuTotals totals;
  double util = 0;
  for (const auto& [agent, usage] : run.gpu_usage) {
    samples += usage.samples();
    util += usage.util_mean() * usage.samples();
    totals.mem_peak_mib = std::max(totals.mem_peak_mib, usage.mem_peak_mib());
    totals.energy_j += usage.energy_j();
  }
  if (samples == 0) return std::nullopt;
  totals.util_mean = util / static_cast<double>(samples);
  return totals;
}

SweepProgress ProgressOf(const SweepEngine& engine, const SweepConfig& config,
                         const RunningTrials& running, const std::vector<absl::Duration>& finished,
                         int most_running, absl::Time start, absl::Time now) {
  SweepProgress p;
  p.elapsed = now - start;
  if (const std::optional<int64_t> planned = engine.sampler().PlannedTrials()) {
    p.planned = *planned;
    p.planned_exact = true;
  } else {
    p.planned = MaxPlannedTrials(config);
  }
  std::vector<absl::Duration> running_for;
  int64_t queued = 0;
  for (const auto& [number, run] : running) {
    p.where[number] = run.placed.empty() ? "queued" : "running";
    if (run.started == absl::InfinitePast()) {
      ++queued;
    } else {
      running_for.push_back(now - run.started);
    }
    double util = 0;
    for (const auto& [agent, usage] : run.gpu_usage) util += usage.util_now();
    if (!run.gpu_usage.empty())
      p.gpu_util[number] = util / static_cast<double>(run.gpu_usage.size());
  }
  std::set<int64_t> taken;  // points some trial has taken (retries share theirs)
  for (const Trial& t : engine.study().trials) taken.insert(t.point);
  const int64_t not_started =
      std::max<int64_t>(0, p.planned - static_cast<int64_t>(taken.size())) + queued;
  p.eta = EstimateRemaining(
      finished, running_for, not_started,
      static_cast<int>(std::min<int64_t>(std::max(1, most_running), config.max_concurrent_trials)));
  return p;
}

comm::Envelope SubmitAlone(RunningTrial& run) {
  comm::Envelope envelope;
  comm::TrialSpec* spec = envelope.mutable_submit()->mutable_trial();
  *spec = run.spec;
  spec->set_run_id(0);
  spec->set_trials_per_gpu(1);
  run = RunningTrial{};
  run.spec = *spec;
  return envelope;
}

comm::Envelope CancelFor(int64_t number, const std::string& reason) {
  comm::Envelope envelope;
  envelope.mutable_cancel()->set_trial(number);
  envelope.mutable_cancel()->set_reason(reason);
  return envelope;
}

std::string StderrLines(const std::string& tail, int lines) {
  std::vector<std::string> kept;
  for (absl::string_view line : absl::StrSplit(tail, '\n')) {
    if (!absl::StripAsciiWhitespace(line).empty()) kept.emplace_back(line);
  }
  if (kept.size() > static_cast<size_t>(lines)) kept.erase(kept.begin(), kept.end() - lines);
  if (kept.empty()) return "";
  if (kept.size() == 1) return absl::StrCat("  last stderr: ", Printable(kept[0]), "\n");
  std::string out = absl::StrCat("  last ", kept.size(), " lines of stderr:\n");
  for (const std::string& line : kept) absl::StrAppend(&out, "    ", Printable(line), "\n");
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
