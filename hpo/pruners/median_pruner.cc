#include "hpo/pruners/median_pruner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

namespace tunefleet {
namespace hpo {
namespace {

constexpr double kPercentile = 50.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Optuna's _is_first_in_interval_step: no earlier report of the trial lies in the pruning
// interval that `step` (>= n_warmup_steps) falls in.
bool IsFirstInIntervalStep(int64_t step, const Trial& trial, int64_t n_warmup_steps,
                           int64_t interval_steps) {
  const int64_t nearest_lower_pruning_step =
      (step - n_warmup_steps) / interval_steps * interval_steps + n_warmup_steps;
  int64_t second_last_step = -1;
  for (const auto& [s, value] : trial.intermediate_values) {
    if (s > second_last_step && s != step) second_last_step = s;
  }
  return second_last_step < nearest_lower_pruning_step;
}

// np.nanmax (maximize) or np.nanmin of the trial's intermediate values; all NaN: NaN.
double BestIntermediateValue(const Trial& trial, bool maximize) {
  double best = kNaN;
  for (const auto& [step, value] : trial.intermediate_values) {
    if (std::isnan(value)) continue;
    if (std::isnan(best) || (maximize ? value > best : value < best)) best = value;
  }
  return best;
}

// Optuna's _get_percentile_intermediate_result_over_trials.
double PercentileOverTrials(const std::vector<const Trial*>& completed, bool maximize, int64_t step,
                            double percentile, int64_t n_min_trials) {
  std::vector<double> values;
  for (const Trial* t : completed) {
    auto it = t->intermediate_values.find(step);
    if (it != t->intermediate_values.end()) values.push_back(it->second);
  }
  // NaN values count towards n_min_trials; np.nanpercentile drops them afterwards.
  if (static_cast<int64_t>(values.size()) < n_min_trials) return kNaN;
  if (maximize) percentile = 100 - percentile;
  return NanPercentile(std::move(values), percentile);
}

}  // namespace

double NanPercentile(std::vector<double> values, double percentile) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               values.end());
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  // numpy's _quantile: virtual index (n - 1) * q; past the last index both neighbours are the
  // last value and numpy's "previous index" is -1, which enters gamma.
  const size_t n = values.size();
  const double virtual_index = static_cast<double>(n - 1) * (percentile / 100.0);
  size_t lo, hi;
  double previous_index;
  if (virtual_index >= static_cast<double>(n - 1)) {
    lo = hi = n - 1;
    previous_index = -1;
  } else if (virtual_index < 0) {
    lo = hi = 0;
    previous_index = 0;
  } else {
    previous_index = std::floor(virtual_index);
    lo = static_cast<size_t>(previous_index);
    hi = lo + 1;
  }
  const double gamma = virtual_index - previous_index;
  // numpy's _lerp, including its switch to the upper bound at gamma >= 0.5 (this matters for
  // infinities: inf - inf is NaN). The BUILD file turns FMA contraction off for this file.
  const double a = values[lo], b = values[hi];
  const double diff_b_a = b - a;
  if (gamma >= 0.5) return b - diff_b_a * (1 - gamma);
  return a + diff_b_a * gamma;
}

bool MedianPruner::Prune(Study* study, size_t index) {
  const Trial& trial = study->trials[index];
  const std::vector<const Trial*> completed = study->TrialsInState(TrialState::kComplete);
  const int64_t n_trials = static_cast<int64_t>(completed.size());
  if (n_trials == 0 || n_trials < spec_.n_startup_trials) return false;

  const std::optional<int64_t> step = trial.LastStep();
  if (!step || *step < spec_.n_warmup_steps) return false;
  if (!IsFirstInIntervalStep(*step, trial, spec_.n_warmup_steps, spec_.interval_steps)) {
    return false;
  }

  const double best = BestIntermediateValue(trial, study->maximize);
  if (std::isnan(best)) return true;
  const double p =
      PercentileOverTrials(completed, study->maximize, *step, kPercentile, spec_.n_min_trials);
  if (std::isnan(p)) return false;
  return study->maximize ? best < p : best > p;
}

}  // namespace hpo
}  // namespace tunefleet
