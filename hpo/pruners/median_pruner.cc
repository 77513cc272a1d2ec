#include "hpo/pruners/median_pruner.h"

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace hpo {
namespace {

PercentileSpec AtFifty(const MedianSpec& m) {
  return {50.0, m.n_startup_trials, m.n_warmup_steps, m.interval_steps, m.n_min_trials};
}

class MedianSettings : public PrunerSettings {
 public:
  explicit MedianSettings(const MedianSpec& spec) : spec_(spec) {}
  std::string type() const override { return "median"; }
  std::string Describe(bool maximize) const override {
    const MedianSpec& m = spec_;
    return absl::StrFormat(
        "median (Optuna MedianPruner: n_startup_trials=%d, n_warmup_steps=%d, interval_steps=%d, "
        "n_min_trials=%d; steps are samples): once %d trial(s) have completed, from %d samples "
        "on and then every %d samples, stop a trial whose best value so far is %s the median "
        "of the completed trials' values at the same samples",
        m.n_startup_trials, m.n_warmup_steps, m.interval_steps, m.n_min_trials, m.n_startup_trials,
        m.n_warmup_steps, m.interval_steps, maximize ? "below" : "above");
  }
  std::string Json() const override {
    return PrunerJson("median", PercentileScheduleJson(AtFifty(spec_)));
  }
  std::unique_ptr<Pruner> MakePruner() const override {
    return std::make_unique<MedianPruner>(spec_);
  }

 private:
  MedianSpec spec_;
};

absl::StatusOr<PrunerSettingsPtr> Parse(const ConfigMap& m) {
  PercentileSpec s = AtFifty(MedianSpec());
  RETURN_IF_ERROR(ParsePercentileSchedule(m, &s));
  return std::make_shared<MedianSettings>(
      MedianSpec{s.n_startup_trials, s.n_warmup_steps, s.interval_steps, s.n_min_trials});
}

}  // namespace

MedianPruner::MedianPruner(const MedianSpec& spec) : PercentilePruner(AtFifty(spec)) {}

const PrunerKind& MedianPrunerKind() {
  static const PrunerKind* const kKind = new PrunerKind{
      "median",
      {"type", "n_startup_trials", "n_warmup_steps", "interval_steps", "n_min_trials"},
      &Parse};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
