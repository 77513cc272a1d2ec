// The sweep driver's view of the trials it has at the head (hpo/sweep_driver.h; the engine
// holds their study side): where each runs, since when, its GPU telemetry and its spec as
// submitted (to submit again to a restarted head), and what the progress line and the journal
// derive from them.
//
// Thread-safety: plain data and pure functions; the driver's thread only.
#ifndef TUNEFLEET_HPO_RUNNING_TRIALS_H_
#define TUNEFLEET_HPO_RUNNING_TRIALS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "comm/proto/messages.pb.h"
#include "hpo/config/sweep_config.h"
#include "hpo/report/progress_table.h"
#include "hpo/sweep_engine.h"

namespace tunefleet {
namespace hpo {

struct RunningTrial {
  std::map<std::string, std::vector<int32_t>> placed;  // agent -> slots, from Started
  bool missing_metric_logged = false;
  comm::TrialSpec spec;                       // as submitted, to submit again to a restarted head
  absl::Time started = absl::InfinitePast();  // its first Started
  std::map<std::string, comm::GpuUsage> gpu_usage;  // agent -> its latest Telemetry
};

using RunningTrials = std::map<int64_t, RunningTrial>;  // by trial number

// The warm worker that runs rank 0 ("" for a fresh process, or when this agent runs other
// ranks): workers[i] belongs to ranks[i]; a Started without ranks lists rank 0 first.
std::string RankZeroWorker(const comm::Started& started);

// A trial that ran out of memory sharing a GPU, submitted again alone: its spec with
// trials_per_gpu 1 and no run id, as a Submit; `run` starts over with that spec.
comm::Envelope SubmitAlone(RunningTrial& run);

// A Cancel of trial `number`'s run, for the head.
comm::Envelope CancelFor(int64_t number, const std::string& reason);

// The last `lines` lines of a failed trial's stderr tail, as hpo prints them under its line:
// "  last stderr: LINE\n" for one, else "  last N lines of stderr:\n    LINE\n..."; non-printing
// bytes shown escaped (common/clip.h Printable).
std::string StderrLines(const std::string& tail, int lines);

// How many of `running` have started (a Started came).
int StartedCount(const RunningTrials& running);

// A trial's GPU telemetry, all its agents together: utilisation weighted by each agent's
// samples, the highest memory peak, the energy summed; nullopt without samples.
struct GpuTotals {
  double util_mean = 0;
  double mem_peak_mib = 0;
  double energy_j = 0;
};
std::optional<GpuTotals> CombinedGpuUsage(const RunningTrial& trial);

// The progress line at `now`: the plan's size (exact once the sampler knows it, else
// MaxPlannedTrials), where each running trial is and its GPU utilisation, and the ETA from
// the durations of the trials that `finished` and the running ones, with at most
// `most_running` (and max_concurrent_trials) at once.
SweepProgress ProgressOf(const SweepEngine& engine, const SweepConfig& config,
                         const RunningTrials& running, const std::vector<absl::Duration>& finished,
                         int most_running, absl::Time start, absl::Time now);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_RUNNING_TRIALS_H_
