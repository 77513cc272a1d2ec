#include "hpo/samplers/grid_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hpo/samplers/grid_sampler.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kMaxCount / b ? kMaxCount : a * b;
}

// Above these, the bounds are by arithmetic instead of listing the grids (listing costs grid
// points squared).
constexpr int64_t kListGridUpTo = 2000;
constexpr int64_t kListLrsUpTo = 1000;

// How many values a parameter takes in the full grid (GridValues' rule), without listing them;
// an upper bound where FullGrid would drop duplicates.
int64_t GridValueCount(const ParamSpec& p, int64_t points) {
  if (p.distribution == "categorical") {
    return static_cast<int64_t>(p.labels.empty() ? p.values.size() : p.labels.size());
  }
  if (p.distribution == "int") {
    if (p.min == p.max) return 1;
    // The distinct rounded integers of an even spacing of max(points, 2) values.
    const double integers = std::floor(p.max) - std::ceil(p.min) + 1;
    const int64_t n = std::max<int64_t>(points, 2);
    if (integers >= static_cast<double>(n)) return n;
    return std::max<int64_t>(1, static_cast<int64_t>(integers));
  }
  return points;
}

}  // namespace

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kMaxCount - b ? kMaxCount : a + b; }

int64_t GridBatchCount(const SearchSettings& c) {
  return std::min<int64_t>(2 * GridSpecOf(c).batch_neighbors + 1,
                           static_cast<int64_t>(c.batch_sizes.size()));
}

int64_t FullGridBound(const SearchSettings& c) {
  int64_t n = c.lr.distribution == "categorical" ? static_cast<int64_t>(c.lr.values.size())
                                                 : GridSpecOf(c).lr_points;
  n = SaturatingMul(n, static_cast<int64_t>(c.batch_sizes.size()));
  for (const ParamSpec& p : c.params)
    n = SaturatingMul(n, GridValueCount(p, GridSpecOf(c).lr_points));
  return n;
}

int64_t FullGridTrials(const SearchSettings& c) {
  const int64_t bound = FullGridBound(c);
  return bound <= kListGridUpTo ? static_cast<int64_t>(FullGrid(c).size()) : bound;
}

int64_t LocalGridBound(const SearchSettings& c) {
  // The most lrs a local grid can have: its window placed at, and between, the grid's lrs.
  size_t lrs = 1;
  if (c.lr.distribution == "categorical") {
    lrs = std::min<size_t>(GridSpecOf(c).lr_points, c.lr.values.size());
  } else if (GridSpecOf(c).lr_points > kListLrsUpTo) {
    // Too many grid lrs to place the window at each: the most lattice points a window of its
    // width can hold, plus the nearest one (LocalLrs).
    const bool log = c.lr.distribution == "log_uniform";
    const double half = std::sqrt(GridSpecOf(c).lr_span);
    const double range = log ? std::log(c.lr.max / c.lr.min) : c.lr.max - c.lr.min;
    const double width =
        std::min(range, log ? std::log(GridSpecOf(c).lr_span) : c.lr.max * (half - 1 / half));
    const double step = range / static_cast<double>(GridSpecOf(c).lr_points - 1);
    const double fit = step > 0 ? std::floor(width / step * (1 + 1e-9)) + 2 : 1;
    lrs = static_cast<size_t>(std::min(fit, static_cast<double>(GridSpecOf(c).lr_points)));
  } else {
    const SearchSettings grid_only = [&] {
      SearchSettings g = c;
      g.params.clear();
      g.batch_sizes = {1};
      return g;
    }();
    std::vector<double> at;
    for (const Params& p : FullGrid(grid_only)) at.push_back(p.at(kLrParam));
    for (size_t i = 0; i < at.size(); ++i) {
      lrs = std::max(lrs, LocalLrs(c, at[i]).size());
      if (i + 1 < at.size()) lrs = std::max(lrs, LocalLrs(c, std::sqrt(at[i] * at[i + 1])).size());
    }
  }
  return SaturatingMul(SaturatingMul(GridSpecOf(c).top_k, static_cast<int64_t>(lrs)),
                       GridBatchCount(c));
}

}  // namespace hpo
}  // namespace tunefleet
