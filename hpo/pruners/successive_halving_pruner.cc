#include "hpo/pruners/successive_halving_pruner.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

// Optuna's _estimate_min_resource over the members: unset while no COMPLETE member has
// reported.
std::optional<int64_t> EstimateMinResource(const Study& study,
                                           absl::FunctionRef<bool(const Trial&)> member) {
  const std::optional<int64_t> last_step = LargestCompleteStep(study, member);
  if (!last_step) return std::nullopt;
  return std::max<int64_t>(*last_step / 100, 1);
}

int64_t CurrentRung(const Trial& trial) {
  int64_t rung = 0;
  while (trial.system_attrs.count(CompletedRungKey(rung))) ++rung;
  return rung;
}

// step >= min_resource * reduction_factor^exponent, without overflow (Optuna's ints are
// unbounded; a product past `step` is all that matters).
bool ReachesPromotionStep(int64_t step, int64_t min_resource, int64_t reduction_factor,
                          int64_t exponent) {
  int64_t promotion_step = min_resource;
  for (int64_t i = 0; i < exponent; ++i) {
    if (promotion_step > step / reduction_factor) return false;
    promotion_step *= reduction_factor;
  }
  return step >= promotion_step;
}

// Optuna's _is_trial_promotable_to_next_rung; `competing` includes `value`.
bool IsPromotable(double value, std::vector<double> competing, int64_t reduction_factor,
                  bool maximize) {
  int64_t promotable_idx = static_cast<int64_t>(competing.size()) / reduction_factor - 1;
  // The first reduction_factor - 1 entrants of a rung go on only if they are the best so far.
  if (promotable_idx == -1) promotable_idx = 0;
  std::sort(competing.begin(), competing.end());
  if (maximize) return value >= competing[competing.size() - 1 - promotable_idx];
  return value <= competing[promotable_idx];
}

}  // namespace

std::string CompletedRungKey(int64_t rung) { return "completed_rung_" + std::to_string(rung); }

std::optional<int64_t> LargestCompleteStep(const Study& study,
                                           absl::FunctionRef<bool(const Trial&)> member) {
  std::optional<int64_t> last_step;
  for (const Trial& t : study.trials) {
    if (t.state != TrialState::kComplete || !member(t)) continue;
    const std::optional<int64_t> s = t.LastStep();
    if (s && (!last_step || *s > *last_step)) last_step = s;
  }
  return last_step;
}

SuccessiveHalvingPruner::SuccessiveHalvingPruner(const SuccessiveHalvingSpec& spec)
    : reduction_factor_(spec.reduction_factor),
      min_early_stopping_rate_(spec.min_early_stopping_rate),
      bootstrap_count_(spec.bootstrap_count) {
  if (spec.min_resource > 0) min_resource_ = spec.min_resource;
}

bool SuccessiveHalvingPruner::Prune(Study* study, size_t index) {
  return PruneAmong(study, index, [](const Trial&) { return true; });
}

bool SuccessiveHalvingPruner::PruneAmong(Study* study, size_t index,
                                         absl::FunctionRef<bool(const Trial&)> member) {
  Trial& trial = study->trials[index];
  const std::optional<int64_t> step = trial.LastStep();
  if (!step) return false;
  int64_t rung = CurrentRung(trial);
  const double value = trial.intermediate_values.at(*step);

  while (true) {
    if (!min_resource_) {
      min_resource_ = EstimateMinResource(*study, member);
      if (!min_resource_) return false;
    }
    if (!ReachesPromotionStep(*step, *min_resource_, reduction_factor_,
                              min_early_stopping_rate_ + rung)) {
      return false;
    }
    if (std::isnan(value)) return true;

    // Optuna collects the rung's values from a snapshot of the trials taken before this call
    // wrote anything: read them before recording this trial's value.
    const std::string key = CompletedRungKey(rung);
    std::vector<double> competing;
    for (const Trial& t : study->trials) {
      if (!member(t)) continue;
      auto it = t.system_attrs.find(key);
      if (it != t.system_attrs.end()) competing.push_back(it->second);
    }
    trial.system_attrs[key] = value;
    competing.push_back(value);

    // `competing` includes this trial, hence <=.
    if (static_cast<int64_t>(competing.size()) <= bootstrap_count_) return true;
    if (!IsPromotable(value, std::move(competing), reduction_factor_, study->maximize)) {
      return true;
    }
    ++rung;
  }
}

std::string ResourceText(int64_t samples, const char* auto_text) {
  return samples == 0 ? auto_text : std::to_string(samples);
}

namespace {

class SuccessiveHalvingSettings : public PrunerSettings {
 public:
  explicit SuccessiveHalvingSettings(const SuccessiveHalvingSpec& spec) : spec_(spec) {}
  std::string type() const override { return "successive_halving"; }
  std::string Describe(bool) const override {
    const SuccessiveHalvingSpec& s = spec_;
    return absl::StrFormat(
        "successive_halving (Optuna SuccessiveHalvingPruner: min_resource=%s, "
        "reduction_factor=%d, min_early_stopping_rate=%d, bootstrap_count=%d; steps are "
        "samples): at each rung (min_resource * %d^(rung + %d) samples) keep a trial only if "
        "its value is in the top 1/%d of all trials that reached the rung",
        ResourceText(s.min_resource), s.reduction_factor, s.min_early_stopping_rate,
        s.bootstrap_count, s.reduction_factor, s.min_early_stopping_rate, s.reduction_factor);
  }
  std::string Json() const override {
    const SuccessiveHalvingSpec& s = spec_;
    return PrunerJson(
        "successive_halving",
        {{"min_resource", s.min_resource > 0 ? std::to_string(s.min_resource) : "\"auto\""},
         {"reduction_factor", std::to_string(s.reduction_factor)},
         {"min_early_stopping_rate", std::to_string(s.min_early_stopping_rate)},
         {"bootstrap_count", std::to_string(s.bootstrap_count)}});
  }
  std::unique_ptr<Pruner> MakePruner() const override {
    return std::make_unique<SuccessiveHalvingPruner>(spec_);
  }

 private:
  SuccessiveHalvingSpec spec_;
};

absl::StatusOr<PrunerSettingsPtr> Parse(const ConfigMap& m) {
  SuccessiveHalvingSpec s;
  RETURN_IF_ERROR(GetResourceOrAuto(m, "min_resource", &s.min_resource));
  RETURN_IF_ERROR(GetAtLeast(m, "reduction_factor", &s.reduction_factor, 2));
  RETURN_IF_ERROR(GetAtLeast(m, "min_early_stopping_rate", &s.min_early_stopping_rate, 0));
  RETURN_IF_ERROR(GetAtLeast(m, "bootstrap_count", &s.bootstrap_count, 0));
  if (s.bootstrap_count > 0 && s.min_resource == 0) {
    // Optuna refuses this combination too (SuccessiveHalvingPruner raises ValueError).
    return m.Error("bootstrap_count", "needs an explicit min_resource (not auto)");
  }
  return std::make_shared<SuccessiveHalvingSettings>(s);
}

}  // namespace

const PrunerKind& SuccessiveHalvingPrunerKind() {
  static const PrunerKind* const kKind = new PrunerKind{
      "successive_halving",
      {"type", "min_resource", "reduction_factor", "min_early_stopping_rate", "bootstrap_count"},
      &Parse};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
