#include "hpo/config/sweep_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hpo/lr_scaling.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {

int64_t GridBatchCount(const SweepConfig& c) {
  return std::min<int64_t>(2 * c.grid.batch_neighbors + 1,
                           static_cast<int64_t>(c.batch_sizes.size()));
}

namespace {

constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();

int64_t SaturatingMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > kMaxCount / b ? kMaxCount : a * b;
}

int64_t SaturatingAdd(int64_t a, int64_t b) { return a > kMaxCount - b ? kMaxCount : a + b; }

// Above these, MaxPlannedTrials bounds the grids by arithmetic instead of listing them (listing
// costs grid points squared).
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

int64_t FullGridBound(const SweepConfig& c) {
  int64_t n = c.lr.distribution == "categorical" ? static_cast<int64_t>(c.lr.values.size())
                                                  : c.grid.lr_points;
  n = SaturatingMul(n, static_cast<int64_t>(c.batch_sizes.size()));
  for (const ParamSpec& p : c.params) n = SaturatingMul(n, GridValueCount(p, c.grid.lr_points));
  return n;
}

int64_t MaxPlannedTrials(const SweepConfig& c) {
  if (c.method == "random") return c.random.trials;
  if (c.method == "grid") {
    const int64_t bound = FullGridBound(c);
    return bound <= kListGridUpTo ? static_cast<int64_t>(FullGrid(c).size()) : bound;
  }
  // The most lrs a local grid can have: its window placed at, and between, the grid's lrs.
  size_t lrs = 1;
  if (c.lr.distribution == "categorical") {
    lrs = std::min<size_t>(c.grid.lr_points, c.lr.values.size());
  } else if (c.grid.lr_points > kListLrsUpTo) {
    // Too many grid lrs to place the window at each: the most lattice points a window of its
    // width can hold, plus the nearest one (LocalLrs).
    const bool log = c.lr.distribution == "log_uniform";
    const double half = std::sqrt(c.grid.lr_span);
    const double range = log ? std::log(c.lr.max / c.lr.min) : c.lr.max - c.lr.min;
    const double width =
        std::min(range, log ? std::log(c.grid.lr_span) : c.lr.max * (half - 1 / half));
    const double step = range / static_cast<double>(c.grid.lr_points - 1);
    const double fit = step > 0 ? std::floor(width / step * (1 + 1e-9)) + 2 : 1;
    lrs = static_cast<size_t>(std::min(fit, static_cast<double>(c.grid.lr_points)));
  } else {
    const SweepConfig grid_only = [&] {
      SweepConfig g = c;
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
  return SaturatingAdd(c.random.trials,
                       SaturatingMul(SaturatingMul(c.grid.top_k, static_cast<int64_t>(lrs)),
                                     GridBatchCount(c)));
}

std::string DescribePruner(const SweepConfig& c) { return c.pruner->Describe(c.maximize); }

std::string DescribeSweepPlan(const SweepConfig& c) {
  std::string out;
  absl::StrAppend(&out, "sweep ", c.name, "  (", c.source, ")\n");
  absl::StrAppend(&out, "  metric        ", c.metric_name, " (", c.maximize ? "maximize" : "minimize",
                  ")\n");
  if (c.trainer.synthetic) {
    const SyntheticSpec& s = c.trainer.synthetic_spec;
    absl::StrAppend(&out, absl::StrFormat("  trainer       synthetic: %d steps, %.3g s/step, noise %.3g, seed %d\n",
                                          s.steps, s.seconds_per_step, s.noise, s.seed));
  } else {
    absl::StrAppend(&out, "  trainer       ", c.trainer.config);
    for (const std::string& o : c.trainer.overrides) absl::StrAppend(&out, " ", o);
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "  resource      samples seen across the ranks (the journal's steps)");
  if (!c.trainer.synthetic) {
    absl::StrAppend(&out, "; ", c.trainer.evals_per_epoch, " evaluations an epoch");
  }
  if (c.trainer.samples_per_epoch > 0) {
    absl::StrAppend(&out, "; ", c.trainer.samples_per_epoch, " samples an epoch");
  }
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "  resources     ", c.gpus_per_trial,
                  " rank(s) per trial (a GPU each, or a CPU slot); ");
  if (!c.reuse_workers) {
    absl::StrAppend(&out, "a fresh trainer process per rank (reuse_workers: false)\n");
  } else if (c.trainer.synthetic) {
    // Agents run only `trainer train` trials in warm workers: say why not these.
    absl::StrAppend(&out, "a fresh trainer process per rank (warm workers take `trainer train` "
                          "trials only)\n");
  } else {
    absl::StrAppend(&out, "warm trainer workers, each recycled after ", c.worker_max_trials,
                    " trial(s)",
                    c.gpus_per_trial > 1
                        ? "; a trial on the same slots as the last reuses its process group"
                        : "",
                    "\n");
  }
  const SearchSpace space = BuildSearchSpace(c);
  absl::StrAppend(&out, "  search space\n");
  absl::StrAppend(&out, "    lr          ", space.at(kLrParam).Describe(), "  (base lr)\n");
  absl::StrAppend(&out, "    batch_size  ", space.at(kBatchParam).Describe(), "  (per rank)\n");
  for (const ParamSpec& p : c.params) {
    absl::StrAppend(&out, "    ", p.name, "  ", space.at(p.name).Describe(), "\n");
  }
  if (c.lr_scaling.rule == "linear") {
    absl::StrAppend(&out, absl::StrFormat("  lr scaling    linear: lr_effective = lr * batch_size * %d rank(s) * %d grad_accum / %d\n",
                                          c.gpus_per_trial, c.trainer.grad_accum, c.lr_scaling.base_batch));
  } else {
    absl::StrAppend(&out, "  lr scaling    none: lr_effective = lr\n");
  }
  absl::StrAppend(&out, "  search        ", c.method, "\n");
  if (c.method == "random" || c.method == "random_then_grid") {
    absl::StrAppend(&out, absl::StrFormat("    random      %d trials, seed %d\n", c.random.trials, c.random.seed));
  }
  if (c.method == "random_then_grid") {
    const double half = std::sqrt(c.grid.lr_span);
    absl::StrAppend(&out, absl::StrFormat(
        "    grid        around each of the %d best random trials: the full grid's lrs (%d over "
        "the range) within [lr/%.3g, lr*%.3g] (slid inside the range at a bound) x its batch "
        "and %d neighbour(s) each side%s, minus points already run\n",
        c.grid.top_k, c.grid.lr_points, half, half, c.grid.batch_neighbors,
        c.params.empty() ? "" : ", the other parameters at its values"));
  } else if (c.method == "grid") {
    absl::StrAppend(&out, absl::StrFormat("    grid        %d lr points x %d batch sizes%s\n",
                                          c.lr.distribution == "categorical" ? c.lr.values.size() : c.grid.lr_points,
                                          c.batch_sizes.size(),
                                          c.params.empty() ? "" : " x the other parameters' values"));
  }
  absl::StrAppend(&out, "    planned     at most ", MaxPlannedTrials(c), " trials\n");
  absl::StrAppend(&out, "  pruner        ", DescribePruner(c), "\n");
  absl::StrAppend(&out, absl::StrFormat("  running       %d trial(s) at a time; a failed trial is retried up to %d time(s)\n",
                                        c.max_concurrent_trials, c.max_failures_per_trial));
  absl::StrAppend(&out, "  journal       ", c.journal, "\n");
  if (c.method == "random" || c.method == "random_then_grid") {
    RandomSampler sampler(static_cast<uint64_t>(c.random.seed), c.random.trials);
    absl::StrAppend(&out, "\n  random points\n");
    absl::StrAppend(&out, "    trial  lr          batch_size  lr_effective");
    for (const ParamSpec& q : c.params) absl::StrAppend(&out, "  ", q.name);
    absl::StrAppend(&out, "\n");
    const int64_t shown = std::min<int64_t>(c.random.trials, kPlanRandomPoints);
    for (int64_t i = 0; i < shown; ++i) {
      Params p = sampler.PointFor(i, space);
      const double lr = p[kLrParam];
      const int64_t batch = static_cast<int64_t>(p[kBatchParam]);
      absl::StrAppend(&out, absl::StrFormat("    %5d  %.4e  %10d  %.4e", i, lr, batch,
                                            EffectiveLr(c, p)));
      for (const ParamSpec& q : c.params) {
        absl::StrAppend(&out, absl::StrFormat("  %*s", static_cast<int>(q.name.size()),
                                              ParamValueText(q, p[q.name])));
      }
      absl::StrAppend(&out, "\n");
    }
    if (c.random.trials > shown) {
      absl::StrAppend(&out, "    ... ", c.random.trials - shown, " more random points\n");
    }
  }
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
