#include "hpo/samplers/grid_sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kSection[] = "grid";

absl::StatusOr<std::shared_ptr<const void>> ParseGrid(const ConfigMap& grid) {
  auto spec = std::make_shared<GridPhaseSpec>();
  RETURN_IF_ERROR(grid.AllowOnly({"top_k", "lr_points", "lr_span", "batch_neighbors", "climb"}));
  RETURN_IF_ERROR(GetAtLeast(grid, "top_k", &spec->top_k, 1));
  RETURN_IF_ERROR(GetAtLeast(grid, "lr_points", &spec->lr_points, 1));
  RETURN_IF_ERROR(grid.GetOptional("lr_span", &spec->lr_span));
  if (spec->lr_span < 1.0) {
    return grid.Error("lr_span", absl::StrCat("must be >= 1 (the ratio of the largest to the "
                                              "smallest grid lr), got ",
                                              spec->lr_span));
  }
  RETURN_IF_ERROR(GetAtLeast(grid, "batch_neighbors", &spec->batch_neighbors, 0));
  RETURN_IF_ERROR(grid.GetOptional("climb", &spec->climb));
  return std::shared_ptr<const void>(std::move(spec));
}

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

// Values of a categorical lr nearest `center`, in list order.
std::vector<double> NearestListed(const SearchSettings& c, double center) {
  std::vector<double> out;
  const std::vector<double>& v = c.lr.values;
  const auto it = std::min_element(v.begin(), v.end(), [&](double a, double b) {
    return std::abs(std::log(a / center)) < std::abs(std::log(b / center));
  });
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t k = std::min<int64_t>(GridSpecOf(c).lr_points, n);
  int64_t first = (it - v.begin()) - (k - 1) / 2;
  first = std::max<int64_t>(0, std::min(first, n - k));
  for (int64_t i = first; i < first + k; ++i) out.push_back(v[i]);
  return out;
}

// The index of `batch` among the batch sizes (0 if none).
int64_t BatchIndex(const SearchSettings& c, double batch) {
  const std::vector<int64_t>& v = c.batch_sizes;
  for (size_t i = 0; i < v.size(); ++i) {
    if (static_cast<double>(v[i]) == batch) return static_cast<int64_t>(i);
  }
  return 0;
}

std::vector<double> NeighbourBatches(const SearchSettings& c, double batch) {
  const std::vector<int64_t>& v = c.batch_sizes;
  const int64_t index = BatchIndex(c, batch);
  std::vector<double> out;
  const int64_t n = static_cast<int64_t>(v.size());
  for (int64_t i = std::max<int64_t>(0, index - GridSpecOf(c).batch_neighbors);
       i <= std::min<int64_t>(n - 1, index + GridSpecOf(c).batch_neighbors); ++i) {
    out.push_back(static_cast<double>(v[i]));
  }
  return out;
}

// Points seen so far, indexed by their lr: whether a point is new (no SamePoint one seen) looks
// only at the points whose lr lies within SamePoint's tolerance of its own, not at every point.
// A pass over every point made a grid of 10^5 lrs take minutes (issue 32), so long that the
// head dropped hpo for missed heartbeats.
class PointSet {
 public:
  // Adds `p` unless a SamePoint one is there; whether it was added.
  bool Insert(const Params& p) {
    auto lr = p.find(kLrParam);
    if (lr == p.end() || !std::isfinite(lr->second)) {
      for (size_t i : no_lr_) {
        if (SamePoint(p, points_[i])) return false;
      }
      no_lr_.push_back(points_.size());
    } else {
      // SamePoint's tolerance is 1e-9 of the larger value: 3e-9 of this one covers it.
      const double v = lr->second, slack = 3e-9 * std::abs(v);
      for (auto it = by_lr_.lower_bound(v - slack); it != by_lr_.end() && it->first <= v + slack;
           ++it) {
        if (SamePoint(p, points_[it->second])) return false;
      }
      by_lr_.emplace(v, points_.size());
    }
    points_.push_back(p);
    return true;
  }

 private:
  std::vector<Params> points_;
  std::multimap<double, size_t> by_lr_;  // lr -> index in points_
  std::vector<size_t> no_lr_;            // points without a finite lr
};

}  // namespace

const SamplerSection& GridSection() {
  static const auto* const kSectionEntry = new SamplerSection{kSection, ParseGrid};
  return *kSectionEntry;
}

const GridPhaseSpec& GridSpecOf(const SearchSettings& settings) {
  return SectionOf<GridPhaseSpec>(settings, kSection);
}

GridPhaseSpec& MutableGridSpec(SearchSettings* settings) {
  return MutableSection<GridPhaseSpec>(settings, kSection);
}

std::vector<double> GridValues(const ParamSpec& p, int64_t points) {
  if (p.distribution == "categorical") {
    std::vector<double> out;
    if (p.labels.empty()) return p.values;
    for (size_t i = 0; i < p.labels.size(); ++i) out.push_back(static_cast<double>(i));
    return out;
  }
  if (p.distribution == "int") {
    std::vector<double> out;
    for (double v : LogSpaced(p.min, p.max, std::max<int64_t>(points, 2), false)) {
      const double r = std::round(v);
      if (out.empty() || out.back() != r) out.push_back(r);
    }
    if (p.min == p.max) out = {p.min};
    return out;
  }
  return LogSpaced(p.min, p.max, points, p.distribution == "log_uniform");
}

std::vector<double> LocalLrs(const SearchSettings& c, double center) {
  if (c.lr.distribution == "categorical") return NearestListed(c, center);
  const bool log = c.lr.distribution == "log_uniform";
  // The window: ratio lr_span around the centre (for a uniform lr too), slid inside [min, max].
  const double half = std::sqrt(GridSpecOf(c).lr_span);
  double low = center / half, high = center * half;
  if (log) {
    if (c.lr.max / c.lr.min <= GridSpecOf(c).lr_span) {
      low = c.lr.min;
      high = c.lr.max;
    } else if (high > c.lr.max) {
      low = c.lr.max / GridSpecOf(c).lr_span;
      high = c.lr.max;
    } else if (low < c.lr.min) {
      low = c.lr.min;
      high = c.lr.min * GridSpecOf(c).lr_span;
    }
  } else {
    const double width = high - low;  // kept when slid
    if (width >= c.lr.max - c.lr.min) {
      low = c.lr.min;
      high = c.lr.max;
    } else if (high > c.lr.max) {
      low = c.lr.max - width;
      high = c.lr.max;
    } else if (low < c.lr.min) {
      low = c.lr.min;
      high = c.lr.min + width;
    }
  }
  // The full grid's lrs in the window, and the one nearest the centre in any case.
  const std::vector<double> lattice = LogSpaced(c.lr.min, c.lr.max, GridSpecOf(c).lr_points, log);
  const auto distance = [&](double a) {
    return log ? std::abs(std::log(a / center)) : std::abs(a - center);
  };
  double nearest = lattice.front();
  for (double lr : lattice) {
    if (distance(lr) < distance(nearest)) nearest = lr;
  }
  std::vector<double> out;
  const double slack = 1e-9;  // lattice values on the window's edge are in
  for (double lr : lattice) {
    const bool inside =
        log ? lr >= low * (1 - slack) && lr <= high * (1 + slack)
            : lr >= low - slack * std::abs(low) && lr <= high + slack * std::abs(high);
    if (inside || lr == nearest) out.push_back(lr);
  }
  return out;
}

bool SamePoint(const Params& a, const Params& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, va] : a) {
    auto it = b.find(name);
    if (it == b.end()) return false;
    const double vb = it->second;
    if (va == vb) continue;
    if (std::abs(va - vb) > 1e-9 * std::max(std::abs(va), std::abs(vb))) return false;
  }
  return true;
}

std::vector<Params> LocalGrid(const SearchSettings& config, const Study& study,
                              const std::vector<const Trial*>& random_trials) {
  std::vector<const Trial*> ranked;
  for (const Trial* t : random_trials) {
    if (t->state == TrialState::kComplete && t->value.has_value() && !std::isnan(*t->value)) {
      ranked.push_back(t);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Trial* a, const Trial* b) {
    if (*a->value != *b->value)
      return config.maximize ? *a->value > *b->value : *a->value < *b->value;
    return a->number < b->number;
  });
  if (static_cast<int64_t>(ranked.size()) > GridSpecOf(config).top_k)
    ranked.resize(GridSpecOf(config).top_k);
  PointSet seen;  // the study's points (never run twice), then the grid's
  for (const Trial& t : study.trials) seen.Insert(t.params);
  std::vector<Params> out;
  for (const Trial* best : ranked) {
    const double centre = best->params.at(kLrParam);
    const int64_t centre_batch = BatchIndex(config, best->params.at(kBatchParam));
    std::vector<Params> around;  // ascending lr, then batch
    for (double lr : LocalLrs(config, centre)) {
      for (double batch : NeighbourBatches(config, best->params.at(kBatchParam))) {
        Params p = best->params;  // the other parameters keep the centre's values
        p[kLrParam] = lr;
        p[kBatchParam] = batch;
        around.push_back(std::move(p));
      }
    }
    // Nearest the centre first: its batch before the neighbours, then the lr nearest its lr.
    const bool log = config.lr.distribution != "uniform" && centre > 0;
    const auto key = [&](const Params& p) {
      const double lr = p.at(kLrParam);
      return std::make_pair(
          std::abs(BatchIndex(config, p.at(kBatchParam)) - centre_batch),
          log && lr > 0 ? std::abs(std::log(lr / centre)) : std::abs(lr - centre));
    };
    std::stable_sort(around.begin(), around.end(),
                     [&](const Params& a, const Params& b) { return key(a) < key(b); });
    for (Params& p : around) {
      if (seen.Insert(p)) out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<double> GridLrs(const SearchSettings& config) {
  return config.lr.distribution == "categorical"
             ? config.lr.values
             : LogSpaced(config.lr.min, config.lr.max, GridSpecOf(config).lr_points,
                         config.lr.distribution == "log_uniform");
}

namespace {

int64_t IndexOf(const std::vector<double>& values, double v) {
  for (size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    if (x == v || std::abs(x - v) <= 1e-9 * std::max(std::abs(x), std::abs(v))) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

}  // namespace

LatticeBest BestOnLattice(const SearchSettings& config, const Study& study) {
  const std::vector<double> lrs = GridLrs(config);
  const std::vector<double> batches(config.batch_sizes.begin(), config.batch_sizes.end());
  LatticeBest out;
  for (const Trial& t : study.trials) {
    if (t.state != TrialState::kComplete || !t.value.has_value() || std::isnan(*t.value)) continue;
    const auto lr = t.params.find(kLrParam);
    const auto batch = t.params.find(kBatchParam);
    if (lr == t.params.end() || batch == t.params.end()) continue;
    const int64_t i = IndexOf(lrs, lr->second), j = IndexOf(batches, batch->second);
    if (i < 0 || j < 0) continue;
    const Trial* best = out.trial;
    if (best != nullptr &&
        (config.maximize ? !(*t.value > *best->value) : !(*t.value < *best->value))) {
      continue;  // ties: the earlier trial
    }
    out = {&t, i, j};
  }
  return out;
}

std::vector<Params> ClimbStep(const SearchSettings& config, const Study& study,
                              const std::vector<Params>& planned) {
  const std::vector<double> lrs = GridLrs(config);
  const std::vector<int64_t>& batches = config.batch_sizes;
  // The incumbent: the best COMPLETE trial on the full grid's lattice.
  const LatticeBest at = BestOnLattice(config, study);
  const Trial* best = at.trial;
  const int64_t lr_at = at.lr_index, batch_at = at.batch_index;
  if (best == nullptr) return {};
  PointSet seen;
  for (const Params& p : planned) seen.Insert(p);
  for (const Trial& t : study.trials) seen.Insert(t.params);
  std::vector<Params> out;
  const int64_t n_lr = static_cast<int64_t>(lrs.size());
  const int64_t n_batch = static_cast<int64_t>(batches.size());
  for (int64_t i = lr_at - 1; i <= lr_at + 1; ++i) {  // ascending lr, then batch
    for (int64_t j = batch_at - 1; j <= batch_at + 1; ++j) {
      if (i < 0 || i >= n_lr || j < 0 || j >= n_batch) continue;
      Params p = best->params;  // the other parameters keep the incumbent's values
      p[kLrParam] = lrs[static_cast<size_t>(i)];
      p[kBatchParam] = static_cast<double>(batches[static_cast<size_t>(j)]);
      if (seen.Insert(p)) out.push_back(std::move(p));  // the incumbent itself is in `study`
    }
  }
  return out;
}

std::vector<Params> FullGrid(const SearchSettings& config) {
  std::vector<double> lrs = GridLrs(config);
  std::vector<Params> out;
  for (double lr : lrs) {
    for (int64_t batch : config.batch_sizes) {
      out.push_back({{kLrParam, lr}, {kBatchParam, static_cast<double>(batch)}});
    }
  }
  // Each other parameter multiplies the grid, the first one varying slowest after lr and batch.
  for (const ParamSpec& p : config.params) {
    std::vector<Params> next;
    const std::vector<double> values = GridValues(p, GridSpecOf(config).lr_points);
    for (const Params& base : out) {
      for (double v : values) {
        Params q = base;
        q[p.name] = v;
        next.push_back(std::move(q));
      }
    }
    out = std::move(next);
  }
  std::vector<Params> unique;
  PointSet seen;
  for (Params& p : out) {
    if (seen.Insert(p)) unique.push_back(std::move(p));
  }
  return unique;
}

}  // namespace hpo
}  // namespace tunefleet
