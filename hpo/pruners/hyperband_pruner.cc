#include "hpo/pruners/hyperband_pruner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

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
    const double quotient =
        static_cast<double>(n_brackets * power) / static_cast<double>(s + 1);
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
    n_brackets_ =
        HyperbandBracketCount(spec_.min_resource, *max_resource_, spec_.reduction_factor);
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

}  // namespace hpo
}  // namespace tunefleet
