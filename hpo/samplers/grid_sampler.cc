#include "hpo/samplers/grid_sampler.h"

#include <algorithm>
#include <cmath>

#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

std::vector<double> LogSpaced(double low, double high, int64_t n, bool log) {
  if (n == 1) return {log ? std::sqrt(low * high) : 0.5 * (low + high)};
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(n - 1);
    out.push_back(log ? std::exp(std::log(low) + f * (std::log(high) - std::log(low)))
                      : low + f * (high - low));
  }
  out.front() = low;  // exact ends, free of rounding
  out.back() = high;
  return out;
}

// The lr values of a local grid around `center`.
std::vector<double> LocalLrs(const SweepConfig& c, double center) {
  std::vector<double> out;
  if (c.lr.distribution == "categorical") {
    const std::vector<double>& v = c.lr.values;
    const auto it = std::min_element(v.begin(), v.end(), [&](double a, double b) {
      return std::abs(std::log(a / center)) < std::abs(std::log(b / center));
    });
    const int64_t n = static_cast<int64_t>(v.size());
    const int64_t k = std::min<int64_t>(c.grid.lr_points, n);
    int64_t first = (it - v.begin()) - (k - 1) / 2;
    first = std::max<int64_t>(0, std::min(first, n - k));
    for (int64_t i = first; i < first + k; ++i) out.push_back(v[i]);
    return out;
  }
  const int64_t n = c.grid.lr_points;
  if (n == 1) return {center};
  const double half = std::sqrt(c.grid.lr_span);
  for (int64_t i = 0; i < n; ++i) {
    // Exponent runs from -1/2 to +1/2 of the span; the middle point (odd n) is exactly center.
    const double e = static_cast<double>(2 * i - (n - 1)) / static_cast<double>(2 * (n - 1));
    double lr = 2 * i == n - 1 ? center : center * std::pow(half * half, e);
    out.push_back(std::min(c.lr.max, std::max(c.lr.min, lr)));
  }
  return out;
}

std::vector<double> NeighbourBatches(const SweepConfig& c, double batch) {
  const std::vector<int64_t>& v = c.batch_sizes;
  int64_t index = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (static_cast<double>(v[i]) == batch) index = static_cast<int64_t>(i);
  }
  std::vector<double> out;
  const int64_t n = static_cast<int64_t>(v.size());
  for (int64_t i = std::max<int64_t>(0, index - c.grid.batch_neighbors);
       i <= std::min<int64_t>(n - 1, index + c.grid.batch_neighbors); ++i) {
    out.push_back(static_cast<double>(v[i]));
  }
  return out;
}

void AddUnique(const Params& p, const Study& study, std::vector<Params>* out) {
  for (const Params& q : *out) {
    if (SamePoint(p, q)) return;
  }
  for (const Trial& t : study.trials) {
    if (SamePoint(p, t.params)) return;
  }
  out->push_back(p);
}

}  // namespace

bool SamePoint(const Params& a, const Params& b) {
  auto la = a.find(kLrParam), lb = b.find(kLrParam);
  auto ba = a.find(kBatchParam), bb = b.find(kBatchParam);
  if (la == a.end() || lb == b.end() || ba == a.end() || bb == b.end()) return false;
  return ba->second == bb->second &&
         std::abs(la->second - lb->second) <= 1e-9 * std::max(std::abs(la->second), std::abs(lb->second));
}

std::vector<Params> LocalGrid(const SweepConfig& config, const Study& study,
                              const std::vector<const Trial*>& random_trials) {
  std::vector<const Trial*> ranked;
  for (const Trial* t : random_trials) {
    if (t->state == TrialState::kComplete && t->value.has_value() && !std::isnan(*t->value)) {
      ranked.push_back(t);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Trial* a, const Trial* b) {
    if (*a->value != *b->value) return config.maximize ? *a->value > *b->value : *a->value < *b->value;
    return a->number < b->number;
  });
  if (static_cast<int64_t>(ranked.size()) > config.grid.top_k) ranked.resize(config.grid.top_k);
  std::vector<Params> out;
  for (const Trial* best : ranked) {
    std::vector<double> lrs = LocalLrs(config, best->params.at(kLrParam));
    std::sort(lrs.begin(), lrs.end());
    for (double lr : lrs) {
      for (double batch : NeighbourBatches(config, best->params.at(kBatchParam))) {
        AddUnique({{kLrParam, lr}, {kBatchParam, batch}}, study, &out);
      }
    }
  }
  return out;
}

std::vector<Params> FullGrid(const SweepConfig& config) {
  std::vector<double> lrs = config.lr.distribution == "categorical"
                                ? config.lr.values
                                : LogSpaced(config.lr.min, config.lr.max, config.grid.lr_points,
                                            config.lr.distribution == "log_uniform");
  std::vector<Params> out;
  Study empty;
  for (double lr : lrs) {
    for (int64_t batch : config.batch_sizes) {
      AddUnique({{kLrParam, lr}, {kBatchParam, static_cast<double>(batch)}}, empty, &out);
    }
  }
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
