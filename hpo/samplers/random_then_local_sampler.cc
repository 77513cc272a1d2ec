#include "hpo/samplers/random_then_local_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hpo/samplers/grid_plan.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"

namespace tunefleet {
namespace hpo {
namespace {

bool Near(double a, double b) {
  return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// The incumbent: the best COMPLETE trial on FinerLrs' lattice (which holds the full grid's;
// the grid's own where lr is a list).
LatticeBest LocalIncumbent(const SearchSettings& s, const Study& study) {
  return BestOnLattice(s.lr.distribution != "categorical" ? FinerLrs(s) : s, study);
}

// The finest resolution of the climb: the full grid's.
int64_t MaxSteps(const SearchSettings& s) {
  return std::max<int64_t>(kFirstLocalSteps, GridSpecOf(s).lr_points - 1);
}

bool Known(const Params& p, const Study& study, const std::vector<Params>& planned,
           const std::vector<Params>& out) {
  for (const Trial& t : study.trials) {
    if (SamePoint(p, t.params)) return true;
  }
  for (const std::vector<Params>* list : {&planned, &out}) {
    for (const Params& q : *list) {
      if (SamePoint(p, q)) return true;
    }
  }
  return false;
}

// `settings` whose grid lrs are the full grid's with each step split in 2^level.
SearchSettings SplitLrSteps(const SearchSettings& settings, int64_t level) {
  SearchSettings fine = settings;
  GridPhaseSpec& grid = MutableGridSpec(&fine);
  for (int64_t i = 0; i < level && grid.lr_points < (int64_t{1} << 40); ++i) {
    grid.lr_points = 2 * grid.lr_points - 1;
  }
  return fine;
}

bool OnLrLattice(const SearchSettings& settings, double lr, int64_t level) {
  for (double v : GridLrs(SplitLrSteps(settings, level))) {
    if (Near(v, lr)) return true;
  }
  return false;
}

}  // namespace

SearchSettings FinerLrs(const SearchSettings& settings) {
  return SplitLrSteps(settings, kMaxFinerLrLevels);
}

int64_t LocalSearchBound(const SearchSettings& s) {
  const int64_t grid = LocalGridBound(s);
  const int64_t factor = 1 + static_cast<int64_t>(s.params.size());
  if (grid > 0 && factor > std::numeric_limits<int64_t>::max() / grid) {
    return std::numeric_limits<int64_t>::max();
  }
  return grid * factor;
}

std::vector<double> ImpliedNeighbours(const ParamSpec& param, double value, int64_t steps) {
  if (param.distribution == "categorical") {
    const std::vector<double> values = GridValues(param, 0);  // list order (labels: indices)
    for (size_t i = 0; i < values.size(); ++i) {
      if (!Near(values[i], value)) continue;
      std::vector<double> out;
      if (i > 0) out.push_back(values[i - 1]);
      if (i + 1 < values.size()) out.push_back(values[i + 1]);
      return out;
    }
    return {};
  }
  const std::vector<double> grid = GridValues(param, steps + 1);  // ascending
  double below = 0, above = 0;
  bool has_below = false, has_above = false;
  for (double v : grid) {
    if (Near(v, value)) continue;
    if (v < value) {
      below = v;
      has_below = true;
    } else if (!has_above) {
      above = v;
      has_above = true;
    }
  }
  std::vector<double> out;
  if (has_below) out.push_back(below);
  if (has_above) out.push_back(above);
  return out;
}

namespace {

// Each coordinate's neighbours around the incumbent `at`: lr on the full grid's lattice
// (`lr_steps` steps), batch, then the other parameters at `steps` steps, in file order.
using Moves = std::vector<std::pair<std::string, std::vector<double>>>;
Moves CoordinateMoves(const SearchSettings& settings, const LatticeBest& at, int64_t lr_steps,
                      int64_t steps) {
  const Params& best = at.trial->params;
  Moves moves;
  moves.push_back({kLrParam, ImpliedNeighbours(settings.lr, best.at(kLrParam), lr_steps)});
  moves.push_back({kBatchParam, {}});
  const std::vector<int64_t>& batches = settings.batch_sizes;
  for (int64_t j : {at.batch_index - 1, at.batch_index + 1}) {
    if (j >= 0 && j < static_cast<int64_t>(batches.size())) {
      moves.back().second.push_back(static_cast<double>(batches[j]));
    }
  }
  for (const ParamSpec& spec : settings.params) {
    const auto value = best.find(spec.name);
    if (value == best.end()) continue;
    moves.push_back({spec.name, ImpliedNeighbours(spec, value->second, steps)});
  }
  return moves;
}

}  // namespace

std::vector<Params> LocalClimbStep(const SearchSettings& settings, const Study& study,
                                   const std::vector<Params>& planned, int64_t steps,
                                   LocalRound round) {
  const bool pairs = round == LocalRound::kPairs;
  const bool finer = settings.lr.distribution != "categorical";
  const LatticeBest at = LocalIncumbent(settings, study);
  if (at.trial == nullptr) return {};
  const Params& best = at.trial->params;
  const int64_t lr_steps = std::max<int64_t>(1, GridSpecOf(settings).lr_points - 1);
  std::vector<Params> out;
  const auto add = [&](Params p) {
    if (!Known(p, study, planned, out)) out.push_back(std::move(p));
  };
  const Moves moves = CoordinateMoves(settings, at, lr_steps, steps);
  if (round == LocalRound::kFinerLr) {
    // lr closer in, by halving (not step by step along a finer lattice): the first level finer
    // than the incumbent's lr's own at which a grid step split in 2^level has an unrun lr
    // either side of it.
    if (!finer) return out;
    int64_t level = 0;
    while (level <= kMaxFinerLrLevels && !OnLrLattice(settings, best.at(kLrParam), level)) ++level;
    for (level = std::max(level + 1, kFinerLrLevels); level <= kMaxFinerLrLevels && out.empty();
         ++level) {
      for (double lr : ImpliedNeighbours(settings.lr, best.at(kLrParam), lr_steps << level)) {
        Params p = best;
        p[kLrParam] = lr;
        add(std::move(p));
      }
    }
    return out;
  }
  if (!pairs) {
    // lr x batch as ClimbStep: one grid lr and/or one batch size away, ascending lr then batch.
    std::vector<double> lrs = moves[0].second, sizes = moves[1].second;
    lrs.push_back(best.at(kLrParam));
    sizes.push_back(best.at(kBatchParam));
    std::sort(lrs.begin(), lrs.end());
    std::sort(sizes.begin(), sizes.end());
    for (double lr : lrs) {
      for (double batch : sizes) {
        Params p = best;
        p[kLrParam] = lr;
        p[kBatchParam] = batch;
        add(std::move(p));  // the incumbent itself is in `study`
      }
    }
    for (size_t a = 2; a < moves.size(); ++a) {
      for (double v : moves[a].second) {
        Params p = best;
        p[moves[a].first] = v;
        add(std::move(p));
      }
    }
    return out;
  }
  // Pairs: two coordinates at once, one of them another parameter (lr x batch is above).
  for (size_t b = 2; b < moves.size(); ++b) {
    for (size_t a = 0; a < b; ++a) {
      for (double va : moves[a].second) {
        for (double vb : moves[b].second) {
          Params p = best;
          p[moves[a].first] = va;
          p[moves[b].first] = vb;
          add(std::move(p));
        }
      }
    }
  }
  return out;
}

std::vector<Params> RandomThenLocalSampler::ClimbRound(const Study& settled,
                                                       const std::vector<Params>& planned) {
  for (;;) {
    std::vector<Params> step =
        LocalClimbStep(settings(), settled, planned, steps_, LocalRound::kCoordinates);
    if (!step.empty() || settings().params.empty()) return step;
    for (LocalRound round : {LocalRound::kFinerLr, LocalRound::kPairs}) {
      step = LocalClimbStep(settings(), settled, planned, steps_, round);
      if (!step.empty()) return step;
    }
    if (2 * steps_ > MaxSteps(settings())) return step;
    steps_ *= 2;  // a local optimum at this resolution: look closer
  }
}

const Trial* RandomThenLocalSampler::Incumbent(const Study& settled) const {
  return LocalIncumbent(settings(), settled).trial;
}

std::vector<Params> RandomThenLocalSampler::LookAheadRound(const Study& settled,
                                                           const std::vector<Params>& planned) {
  const int64_t steps = steps_;
  std::vector<Params> out = ClimbRound(settled, planned);
  steps_ = steps;
  return out;
}

namespace {

std::string DescribeRandomThenLocal(const SearchSettings& s) {
  std::string out = absl::StrFormat("    random      %d trials, seed %d\n", RandomSpecOf(s).trials,
                                    RandomSpecOf(s).seed);
  const double half = std::sqrt(GridSpecOf(s).lr_span);
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "    local       around each of the %d best random trials: the full grid's lrs (%d "
          "over the range) within [lr/%.3g, lr*%.3g] x its batch and %d neighbour(s) each side; "
          "then climbs from the best point to its unrun neighbours in every parameter (one grid "
          "lr and/or batch size away%s) until none is left, within %d trials%s\n",
          GridSpecOf(s).top_k, GridSpecOf(s).lr_points, half, half, GridSpecOf(s).batch_neighbors,
          s.params.empty() ? ""
                           : absl::StrFormat("; the other parameters' neighbouring values, "
                                             "ranges split into %d steps; when none is left, "
                                             "lrs 1/%d of a grid step away, halved to 1/%d, "
                                             "then pairs of parameters, then finer steps, to %d",
                                             kFirstLocalSteps, 1 << kFinerLrLevels,
                                             1 << kMaxFinerLrLevels, MaxSteps(s)),
          LocalSearchBound(s), FilledRoundsNote(s)));
  return out;
}

int64_t RandomThenLocalTrials(const SearchSettings& s) {
  return SaturatingAdd(RandomSpecOf(s).trials, LocalSearchBound(s));
}
int64_t RandomTrials(const SearchSettings& s) { return RandomSpecOf(s).trials; }

std::unique_ptr<Sampler> Make(const SearchSettings& s) {
  return std::make_unique<RandomThenLocalSampler>(s);
}

}  // namespace

const SamplerKind& RandomThenLocalKind() {
  static const auto* const kKind = new SamplerKind{"random_then_local",
                                                   TopKWithinRandom,
                                                   DescribeRandomThenLocal,
                                                   RandomThenLocalTrials,
                                                   RandomTrials,
                                                   Make,
                                                   {&RandomSection(), &GridSection()}};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
