// A trial of a study, as the sampler, the pruners and the journal see it (Optuna's FrozenTrial,
// reduced to what tunefleet uses). Params are kept in their external form: lr as a float,
// batch_size as the integer batch.
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
  TrialState state = TrialState::kWaiting;
  std::map<std::string, double> params;
  std::map<int64_t, double> intermediate_values;  // step -> reported metric
  std::optional<double> value;                     // final objective value
  double lr_effective = 0;                         // user attribute
  std::string phase;                               // "random" | "grid"; user attribute
  int attempt = 0;                                 // retries of this point so far
  std::optional<int64_t> LastStep() const {
    if (intermediate_values.empty()) return std::nullopt;
    return intermediate_values.rbegin()->first;
  }
};

// The study as the sampler and pruners read it: its direction and all trials so far.
struct Study {
  bool maximize = true;
  std::vector<Trial> trials;
  std::vector<const Trial*> TrialsInState(TrialState state) const;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_TRIAL_H_
