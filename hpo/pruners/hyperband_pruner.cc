#include "hpo/pruners/hyperband_pruner.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

// Above every CRC-32: budgets are saturated here (HyperbandBudgets).
constexpr int64_t kBudgetCap = int64_t{1} << 32;

constexpr std::array<uint32_t, 256> MakeCrc32Table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kCrc32Table = MakeCrc32Table();

// reduction_factor^exponent, or kBudgetCap when that is kBudgetCap or more.
int64_t SaturatedPower(int64_t reduction_factor, int64_t exponent) {
  int64_t power = 1;
  for (int64_t i = 0; i < exponent; ++i) {
    if (power > (kBudgetCap - 1) / reduction_factor) return kBudgetCap;  // product >= cap
    power *= reduction_factor;
  }
  return power;
}

// Optuna's "auto" max_resource: the largest last step of the COMPLETE trials, plus one (an
// impossible step of INT64_MAX stays there: 2^63 is the same double); unset while none has
// reported.
std::optional<int64_t> EstimateMaxResource(const Study& study) {
  const std::optional<int64_t> last_step =
      LargestCompleteStep(study, [](const Trial&) { return true; });
  if (!last_step) return std::nullopt;
  if (*last_step == std::numeric_limits<int64_t>::max()) return last_step;
  return *last_step + 1;
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  uint32_t c = 0xFFFFFFFFu;
  for (const char ch : data) c = kCrc32Table[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

int64_t HyperbandBracketCount(int64_t min_resource, int64_t max_resource,
                              int64_t reduction_factor) {
  // Python: max_resource / min_resource is a correctly rounded double (the same as this for
  // ints up to 2^53), and math.log(x, base) is log(x) / log(float(base)).
  const double ratio = static_cast<double>(max_resource) / static_cast<double>(min_resource);
  const double log = std::log(ratio) / std::log(static_cast<double>(reduction_factor));
  return static_cast<int64_t>(std::floor(log)) + 1;
}

std::vector<int64_t> HyperbandBudgets(int64_t n_brackets, int64_t reduction_factor) {
  std::vector<int64_t> budgets;
  for (int64_t bracket = 0; bracket < n_brackets; ++bracket) {
    const int64_t s = n_brackets - 1 - bracket;
    const int64_t power = SaturatedPower(reduction_factor, s);
    // n_brackets >= s + 1, so the budget is at least the power: saturated with it.
    if (power == kBudgetCap) {
      budgets.push_back(kBudgetCap);
      continue;
    }
    // n_brackets <= 64, so the product is below 2^38: exact in a double, and the division
    // rounds as Python's int / int does.
    const double quotient = static_cast<double>(n_brackets * power) / static_cast<double>(s + 1);
    budgets.push_back(std::min(static_cast<int64_t>(std::ceil(quotient)), kBudgetCap));
  }
  return budgets;
}

int64_t HyperbandBracket(std::string_view study_name, int64_t trial_number,
                         const std::vector<int64_t>& budgets) {
  const int64_t total = std::accumulate(budgets.begin(), budgets.end(), int64_t{0});
  std::string key(study_name);  // Optuna's "{}_{}".format(study_name, trial.number)
  key += '_';
  key += std::to_string(trial_number);
  int64_t n = Crc32(key) % total;
  for (size_t bracket = 0; bracket + 1 < budgets.size(); ++bracket) {
    n -= budgets[bracket];
    if (n < 0) return static_cast<int64_t>(bracket);
  }
  return static_cast<int64_t>(budgets.size()) - 1;  // n < total: the last one
}

HyperbandPruner::HyperbandPruner(const HyperbandSpec& spec) : spec_(spec) {
  if (spec.max_resource > 0) max_resource_ = spec.max_resource;
}

void HyperbandPruner::TryInitialize(const Study& study) {
  if (!max_resource_) {
    max_resource_ = EstimateMaxResource(study);
    if (!max_resource_) return;
  }
  if (!n_brackets_) {
    n_brackets_ = HyperbandBracketCount(spec_.min_resource, *max_resource_, spec_.reduction_factor);
  }
  budgets_ = HyperbandBudgets(*n_brackets_, spec_.reduction_factor);
  for (int64_t bracket = 0; bracket < *n_brackets_; ++bracket) {
    brackets_.emplace_back(SuccessiveHalvingSpec{spec_.min_resource, spec_.reduction_factor,
                                                 /*min_early_stopping_rate=*/bracket,
                                                 spec_.bootstrap_count});
  }
}

bool HyperbandPruner::Prune(Study* study, size_t index) {
  if (brackets_.empty()) {
    TryInitialize(*study);
    if (brackets_.empty()) return false;
  }
  const std::string& name = study->name;
  const int64_t bracket = HyperbandBracket(name, study->trials[index].number, budgets_);
  return brackets_[bracket].PruneAmong(study, index, [&](const Trial& t) {
    return HyperbandBracket(name, t.number, budgets_) == bracket;
  });
}

namespace {

// W&B's hyperband keys and tunefleet's (Optuna's) for the same setting.
constexpr const char* kSameSetting[][2] = {
    {"min_iter", "min_resource"}, {"max_iter", "max_resource"}, {"eta", "reduction_factor"}};

absl::Status ParseHyperband(const ConfigMap& m, HyperbandSpec* h) {
  if (m.Has("strict")) {
    return m.Error("strict",
                   "W&B's strict hyperband is not supported (tunefleet's hyperband is "
                   "Optuna's HyperbandPruner); remove it");
  }
  for (const auto& [wandb, ours] : kSameSetting) {
    if (m.Has(wandb) && m.Has(ours)) {
      return m.Error(wandb,
                     absl::StrCat("give ", wandb, " (W&B's spelling) or ", ours, ", not both"));
    }
  }
  RETURN_IF_ERROR(GetResourceOrAuto(m, "min_resource", &h->min_resource));
  RETURN_IF_ERROR(GetResourceOrAuto(m, "max_resource", &h->max_resource));
  RETURN_IF_ERROR(GetAtLeast(m, "reduction_factor", &h->reduction_factor, 2));
  RETURN_IF_ERROR(GetAtLeast(m, "eta", &h->reduction_factor, 2));
  RETURN_IF_ERROR(GetAtLeast(m, "bootstrap_count", &h->bootstrap_count, 0));
  if (m.Has("min_iter")) RETURN_IF_ERROR(GetAtLeast(m, "min_iter", &h->min_iter, 1));
  if (m.Has("max_iter")) RETURN_IF_ERROR(GetAtLeast(m, "max_iter", &h->max_iter, 1));
  if (m.Has("s")) {
    for (const char* smallest : {"min_iter", "min_resource"}) {
      if (m.Has(smallest)) {
        return m.Error("s", absl::StrCat("s sets the smallest rung from max_iter (max_iter / "
                                         "eta^s): give s or ",
                                         smallest, ", not both"));
      }
    }
    if (!m.Has("max_iter")) return m.Error("s", "needs max_iter (min_iter = max_iter / eta^s)");
    int64_t s = 0;
    RETURN_IF_ERROR(GetAtLeast(m, "s", &s, 0));
    // W&B's bracket rule: divide max_iter by eta s times, rounding down.
    h->min_iter = h->max_iter;
    for (int64_t i = 0; i < s && h->min_iter > 0; ++i) h->min_iter /= h->reduction_factor;
    if (h->min_iter < 1) {
      return m.Error(
          "s", absl::StrCat("max_iter / eta^s = ", h->max_iter, " / ", h->reduction_factor, "^", s,
                            " is below one evaluation: use a smaller s"));
    }
  }
  if (h->min_iter > 0 && h->max_iter > 0 && h->min_iter > h->max_iter) {
    return m.Error("max_iter",
                   absl::StrCat("must be >= min_iter (", h->min_iter, "), got ", h->max_iter));
  }
  if (h->bootstrap_count > 0 && h->max_resource == 0 && h->max_iter == 0) {
    // Optuna refuses this combination (HyperbandPruner raises ValueError).
    return m.Error("bootstrap_count", "needs an explicit max_resource (not auto)");
  }
  return absl::OkStatus();
}

class HyperbandSettings : public PrunerSettings {
 public:
  explicit HyperbandSettings(const HyperbandSpec& spec) : spec_(spec) {}
  std::string type() const override { return "hyperband"; }
  absl::StatusOr<PrunerSettingsPtr> Resolve(const ResourceAxis& axis,
                                            const std::string& path) const override;
  std::string Describe(bool) const override {
    const HyperbandSpec& h = spec_;
    return absl::StrFormat(
        "hyperband (Optuna HyperbandPruner: min_resource=%s, max_resource=%s, "
        "reduction_factor=%d, bootstrap_count=%d; steps are samples): each trial joins one of "
        "floor(log_%d(max_resource / min_resource)) + 1 brackets, each a successive halving "
        "whose first rung lies %d times further than the bracket before",
        ResourceText(h.min_resource, "auto (one evaluation interval)"),
        ResourceText(h.max_resource), h.reduction_factor, h.bootstrap_count, h.reduction_factor,
        h.reduction_factor);
  }
  std::string Json() const override {
    const HyperbandSpec& h = spec_;
    return PrunerJson(
        "hyperband",
        {{"min_resource", std::to_string(h.min_resource)},
         {"max_resource", h.max_resource > 0 ? std::to_string(h.max_resource) : "\"auto\""},
         {"reduction_factor", std::to_string(h.reduction_factor)},
         {"bootstrap_count", std::to_string(h.bootstrap_count)}});
  }
  std::unique_ptr<Pruner> MakePruner() const override {
    return std::make_unique<HyperbandPruner>(spec_);
  }

 private:
  HyperbandSpec spec_;
};

// The resources in samples: min_resource "auto" is one evaluation interval, and W&B's
// min_iter / max_iter count evaluation intervals (the synthetic trainer's interval is one step).
absl::StatusOr<PrunerSettingsPtr> HyperbandSettings::Resolve(const ResourceAxis& axis,
                                                             const std::string& path) const {
  HyperbandSpec h = spec_;
  if (h.min_resource > 0 && h.min_iter == 0 && h.max_iter == 0) return shared_from_this();
  const int64_t interval = axis.interval;
  if (interval <= 0) {
    const char* key = h.min_iter > 0 ? "min_iter" : h.max_iter > 0 ? "max_iter" : "min_resource";
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": early_terminate.", key,
        h.min_iter > 0 || h.max_iter > 0 ? ": counts evaluation intervals"
                                         : ": auto is one evaluation interval",
        ", but the training data cannot be read here to size it: give ",
        h.max_iter > 0 && h.min_iter == 0 ? "max_resource" : "min_resource", " in samples"));
  }
  for (int64_t* iters : {&h.min_iter, &h.max_iter}) {
    if (*iters > INT64_MAX / interval) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": early_terminate: ", *iters,
                                                     " evaluations of ", interval,
                                                     " samples overflow the samples axis"));
    }
  }
  if (h.max_iter > 0) h.max_resource = h.max_iter * interval;
  if (h.min_iter > 0) h.min_resource = h.min_iter * interval;
  if (h.min_resource == 0) h.min_resource = interval;
  return std::make_shared<HyperbandSettings>(h);
}

absl::StatusOr<PrunerSettingsPtr> Parse(const ConfigMap& m) {
  HyperbandSpec h;
  RETURN_IF_ERROR(ParseHyperband(m, &h));
  return std::make_shared<HyperbandSettings>(h);
}

}  // namespace

const PrunerKind& HyperbandPrunerKind() {
  static const PrunerKind* const kKind =
      new PrunerKind{"hyperband",
                     {"type", "min_resource", "max_resource", "reduction_factor", "bootstrap_count",
                      // W&B's spellings (ParseHyperband refuses strict with its own message)
                      "min_iter", "max_iter", "eta", "s", "strict"},
                     &Parse};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
