#include "hpo/bounds.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace hpo {
namespace {

// Where `value` lies in [low, high], 0 to 1 (log scale when `log`).
double Position(double value, double low, double high, bool log) {
  if (log) return (std::log(value) - std::log(low)) / (std::log(high) - std::log(low));
  return (value - low) / (high - low);
}

BoundHit RangeHit(const std::string& name, const Distribution& d, bool upper) {
  const double bound = upper ? d.high : d.low;
  return BoundHit{
      name, upper,
      absl::StrCat("best ", name, " at the ", upper ? "upper" : "lower", " bound ",
                   d.ValueText(bound), ": widen parameters.", name, ".", upper ? "max" : "min")};
}

BoundHit ListHit(const std::string& name, const Distribution& d, bool upper) {
  const double bound = upper ? *std::max_element(d.choices.begin(), d.choices.end())
                             : *std::min_element(d.choices.begin(), d.choices.end());
  return BoundHit{name, upper,
                  absl::StrCat("best ", name, " at the ", upper ? "largest" : "smallest", " value ",
                               d.ValueText(bound), ": add ", upper ? "larger" : "smaller",
                               " values to parameters.", name, ".values")};
}

}  // namespace

std::vector<BoundHit> BestAtBounds(const SearchSpace& space,
                                   const std::map<std::string, double>& best) {
  std::vector<BoundHit> hits;
  for (const auto& [name, value] : best) {
    auto it = space.find(name);
    if (it == space.end()) continue;
    const Distribution& d = it->second;
    if (d.kind == Distribution::Kind::kFloat) {
      if (!(d.high > d.low)) continue;
      const double p = Position(value, d.low, d.high, d.log);
      if (p >= 1 - kBoundShare) hits.push_back(RangeHit(name, d, true));
      if (p <= kBoundShare) hits.push_back(RangeHit(name, d, false));
    } else if (d.kind == Distribution::Kind::kInt) {
      if (d.high - d.low < 2) continue;
      if (value >= d.high) hits.push_back(RangeHit(name, d, true));
      if (value <= d.low) hits.push_back(RangeHit(name, d, false));
    } else if (d.labels.empty() && d.choices.size() >= 3) {
      const double lo = *std::min_element(d.choices.begin(), d.choices.end());
      const double hi = *std::max_element(d.choices.begin(), d.choices.end());
      if (value == hi) hits.push_back(ListHit(name, d, true));
      if (value == lo) hits.push_back(ListHit(name, d, false));
    }
  }
  return hits;
}

}  // namespace hpo
}  // namespace tunefleet
