// A trial of a study, as the samplers, the pruners and the journal see it (Optuna's
// FrozenTrial, reduced to what tunefleet uses). Params are kept in their external form: lr as a
// float, batch_size as the integer batch (as a double).
//
// Trial numbers are Optuna's: 0, 1, 2, ... in creation order. A retry of a failed trial is a new
// trial with the same params, linked as Optuna's RetryFailedTrialCallback links it
// (system attrs "failed_trial" and "retry_history").
#ifndef TUNEFLEET_HPO_TRIAL_H_
#define TUNEFLEET_HPO_TRIAL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tunefleet {
namespace hpo {

// Numbered as Optuna's TrialState, which the journal stores.
enum class TrialState { kRunning = 0, kComplete = 1, kPruned = 2, kFail = 3, kWaiting = 4 };

const char* TrialStateName(TrialState state);  // "RUNNING", "COMPLETE", ...
inline bool IsFinished(TrialState s) {
  return s == TrialState::kComplete || s == TrialState::kPruned || s == TrialState::kFail;
}

struct Trial {
  int64_t number = 0;
  TrialState state = TrialState::kRunning;
  std::map<std::string, double> params;           // "lr", "batch_size"
  std::map<int64_t, double> intermediate_values;  // step -> reported metric
  std::optional<double> value;                    // objective value once COMPLETE

  // Numeric system attrs: successive halving's "completed_rung_N" values.
  std::map<std::string, double> system_attrs;
  // Retry links (Optuna's RetryFailedTrialCallback): the first trial of this point, and every
  // earlier attempt's number.
  std::optional<int64_t> failed_trial;
  std::vector<int64_t> retry_history;

  // User attrs.
  double lr_effective = 0;
  std::string phase;        // "random" | "grid"
  int64_t point = -1;       // index of the point in the sweep's plan (retries share it)
  std::string fail_reason;  // FAIL only: "exit code 1", "killed by signal 9", "interrupted"
  std::string stderr_tail;  // FAIL only: the end of the failing rank's stderr
  std::string placement;    // where it ran: agent and GPU (slot) indices, "local:0-3"
  // When its ranks started on their agent (Optuna's datetime format; datetime_start is when hpo
  // submitted it, earlier when the trial waited at the agent, e.g. for GPU memory).
  std::string ranks_started;
  // The warm trainer worker that ran rank 0, "AGENT/slot-S/w-PID#N" (comm Started.workers);
  // empty for a fresh trainer process.
  std::string worker;
  // It ran out of GPU memory sharing a GPU and was run again alone (user attr "requeued_alone").
  bool requeued_alone = false;
  // GPU telemetry: NVML samples taken by the agents every second on the trial's GPUs while it
  // ran (launcher/agent/gpu_telemetry.h). Absent where no agent could load NVML (or on CPU slots).
  std::optional<double> gpu_util_mean;     // user attr "gpu_util_mean": mean utilisation, %
  std::optional<double> gpu_mem_peak_mib;  // "gpu_mem_peak_mib": peak memory used on one GPU
  std::optional<double> gpu_energy_j;      // "gpu_energy_j": energy of all its GPUs, joules

  std::string datetime_start;     // ISO 8601, local time, microseconds (Optuna's format)
  std::string datetime_complete;  // empty until finished

  std::optional<int64_t> LastStep() const {
    if (intermediate_values.empty()) return std::nullopt;
    return intermediate_values.rbegin()->first;
  }
};

// The study as the sampler and pruners read it: its direction and all trials so far, in
// trial-number order (trials[i].number == i).
struct Study {
  std::string name;
  bool maximize = true;
  std::vector<Trial> trials;
  std::vector<const Trial*> TrialsInState(TrialState state) const;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_TRIAL_H_
