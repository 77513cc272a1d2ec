#include "hpo/pruners/percentile_pruner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/py_json.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

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

bool PercentilePruner::Prune(Study* study, size_t index) {
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
      PercentileOverTrials(completed, study->maximize, *step, spec_.percentile, spec_.n_min_trials);
  if (std::isnan(p)) return false;
  return study->maximize ? best < p : best > p;
}

absl::Status ParsePercentileSchedule(const ConfigMap& m, PercentileSpec* s) {
  RETURN_IF_ERROR(GetAtLeast(m, "n_startup_trials", &s->n_startup_trials, 0));
  RETURN_IF_ERROR(GetAtLeast(m, "n_warmup_steps", &s->n_warmup_steps, 0));
  RETURN_IF_ERROR(GetAtLeast(m, "interval_steps", &s->interval_steps, 1));
  RETURN_IF_ERROR(GetAtLeast(m, "n_min_trials", &s->n_min_trials, 1));
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::string>> PercentileScheduleJson(const PercentileSpec& s) {
  return {{"n_startup_trials", std::to_string(s.n_startup_trials)},
          {"n_warmup_steps", std::to_string(s.n_warmup_steps)},
          {"interval_steps", std::to_string(s.interval_steps)},
          {"n_min_trials", std::to_string(s.n_min_trials)}};
}

namespace {

class PercentileSettings : public PrunerSettings {
 public:
  explicit PercentileSettings(const PercentileSpec& spec) : spec_(spec) {}
  std::string type() const override { return "percentile"; }
  std::string Describe(bool maximize) const override {
    const PercentileSpec& s = spec_;
    return absl::StrFormat(
        "percentile (Optuna PercentilePruner: percentile=%g, n_startup_trials=%d, "
        "n_warmup_steps=%d, interval_steps=%d, n_min_trials=%d; steps are samples): once %d "
        "trial(s) have completed, from %d samples on and then every %d samples, stop a trial "
        "whose best value so far is %s the %gth percentile of the completed trials' values at "
        "the same samples (it keeps the best %g%%)",
        s.percentile, s.n_startup_trials, s.n_warmup_steps, s.interval_steps, s.n_min_trials,
        s.n_startup_trials, s.n_warmup_steps, s.interval_steps, maximize ? "below" : "above",
        maximize ? 100 - s.percentile : s.percentile, s.percentile);
  }
  std::string Json() const override {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"percentile", JsonFloat(spec_.percentile)}};
    for (auto& field : PercentileScheduleJson(spec_)) fields.push_back(std::move(field));
    return PrunerJson("percentile", fields);
  }
  std::unique_ptr<Pruner> MakePruner() const override {
    return std::make_unique<PercentilePruner>(spec_);
  }

 private:
  PercentileSpec spec_;
};

absl::StatusOr<PrunerSettingsPtr> Parse(const ConfigMap& m) {
  PercentileSpec s;
  RETURN_IF_ERROR(m.Get("percentile", &s.percentile));
  if (!(s.percentile >= 0 && s.percentile <= 100)) {  // as Optuna checks it (NaN: Get refuses)
    return m.Error("percentile", absl::StrCat("must be in [0, 100], got ", s.percentile));
  }
  RETURN_IF_ERROR(ParsePercentileSchedule(m, &s));
  return std::make_shared<PercentileSettings>(s);
}

}  // namespace

const PrunerKind& PercentilePrunerKind() {
  static const PrunerKind* const kKind =
      new PrunerKind{"percentile",
                     {"type", "percentile", "n_startup_trials", "n_warmup_steps", "interval_steps",
                      "n_min_trials"},
                     &Parse};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
