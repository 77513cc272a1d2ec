#include "trainer/tasks/correlation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tunefleet {
namespace trainer {

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2 || y.size() != n) return std::numeric_limits<double>::quiet_NaN();
  // A constant series (tested exactly, as scipy does: its computed mean may be inexact).
  auto constant = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [&](double e) { return e == v[0]; });
  };
  if (constant(x) || constant(y)) return std::numeric_limits<double>::quiet_NaN();
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n);
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::numeric_limits<double>::quiet_NaN();
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

std::vector<double> AverageRanks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

double Spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return std::numeric_limits<double>::quiet_NaN();
  return Pearson(AverageRanks(x), AverageRanks(y));
}

}  // namespace trainer
}  // namespace tunefleet
