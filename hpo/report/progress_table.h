// What `hpo sweep` shows while it runs: a header (finished / planned, by state, running, best,
// elapsed, ETA) and a table of trials (trial, phase, lr, lr_effective, batch, state, samples seen
// at the last report, last value, where it runs, its GPU utilisation), redrawn in place on a
// terminal; on a pipe or a file, one line per finished trial instead (with its GPU telemetry).
// And the final summary naming the best trial.
#ifndef TUNEFLEET_HPO_REPORT_PROGRESS_TABLE_H_
#define TUNEFLEET_HPO_REPORT_PROGRESS_TABLE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hpo/config/sweep_config.h"
#include "hpo/invocation.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

struct SweepProgress {
  int64_t planned = 0;         // points the search will run (best known; the header shows at
                               // least the points the study has taken)
  bool planned_exact = false;  // false while the grid is not known yet
  absl::Duration elapsed;
  std::map<int64_t, std::string> where;  // running trial -> "queued" | "running"
  std::map<int64_t, double> gpu_util;    // running trial -> its GPUs' latest utilisation, %
  // What the rest of the sweep should take (EstimateRemaining); an upper bound while the plan
  // is (planned_exact false).
  std::optional<absl::Duration> eta;
};

// How long the rest of a sweep should take, `parallel` trials at a time, from the durations of
// the trials that ran to their end or were pruned (`finished`): a point not started yet takes
// their mean; a trial running for t takes what those that ran longer than t took, on average,
// less t; and no less than the longest of these. nullopt before any trial finished.
std::optional<absl::Duration> EstimateRemaining(const std::vector<absl::Duration>& finished,
                                                const std::vector<absl::Duration>& running_for,
                                                int64_t not_started, int parallel);

// Where a run's ranks run, compactly: agent name, colon, its slots (GPU indices on GPU nodes)
// with runs of consecutive ones as ranges: "local:0-3", "node-a:0,1 node-b:6,7".
std::string Placement(const std::map<std::string, std::vector<int32_t>>& slots_by_agent);

class ProgressTable {
 public:
  explicit ProgressTable(const SweepConfig& config) : config_(config) {}

  // The live block: header and up to `max_rows` trials (running first, then the latest
  // finished). Ends with a newline.
  std::string Render(const Study& study, const SweepProgress& progress, int max_rows) const;
  // One line for a trial that just finished (or failed and will be retried): its number, state,
  // params, value, how long it ran (`ran`, when known), its GPU telemetry and where it ran
  // (Trial::placement): "trial 3 COMPLETE  lr=2.000e-05 lr_eff=2.000e-05 batch=32
  // eval/spearman=0.8123  41.2 s  on local:0".
  std::string EventLine(const Trial& trial, std::optional<absl::Duration> ran = std::nullopt) const;
  std::string Header(const Study& study, const SweepProgress& progress) const;
  // Ends with the journal and the command that shows it, `hpo` (hpo/invocation.h) status.
  std::string Summary(const Study& study, const SweepProgress& progress, const std::string& journal,
                      const std::string& hpo = HpoInvocation()) const;
  // The best COMPLETE trial, by the metric's goal.
  static const Trial* Best(const Study& study);

 private:
  std::string Row(const Trial& trial, const std::string& where,
                  std::optional<double> gpu_util_now) const;
  std::string OtherParams(const Trial& trial) const;
  // The metric column: as wide as its name, at least 9.
  int MetricWidth() const { return std::max(9, static_cast<int>(config_.metric_name.size())); }
  SweepConfig config_;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_PROGRESS_TABLE_H_
