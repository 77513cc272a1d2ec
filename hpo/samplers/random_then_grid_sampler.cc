#include "hpo/samplers/random_then_grid_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hpo/samplers/grid_plan.h"
#include "hpo/samplers/grid_sampler.h"

namespace tunefleet {
namespace hpo {

RandomThenGridSampler::RandomThenGridSampler(const SearchSettings& config)
    : config_(config),
      space_(BuildSearchSpace(config)),
      random_(static_cast<uint64_t>(RandomSpecOf(config).seed), -1),
      random_points_(config.method == "grid" ? 0 : RandomSpecOf(config).trials) {
  if (config.method == "grid") grid_ = FullGrid(config);
  if (config.method == "random") grid_ = std::vector<Params>{};
}

bool RandomThenGridSampler::Settled(const Study& study, int64_t point) const {
  return PointSettled(study, point, config_.max_failures_per_trial);
}

int64_t RandomThenGridSampler::NextUntakenPoint(const Study& study) const {
  Taken& k = taken_;
  const bool same = k.study == &study && k.seen <= study.trials.size() &&
                    (k.seen == 0 || (study.trials[k.seen - 1].number == k.last_number &&
                                     study.trials[k.seen - 1].point == k.last_point));
  if (!same) k = Taken{&study};
  for (; k.seen < study.trials.size(); ++k.seen) {
    k.points.insert(study.trials[k.seen].point);
    k.last_number = study.trials[k.seen].number;
    k.last_point = study.trials[k.seen].point;
  }
  while (k.points.count(k.next) > 0) ++k.next;
  return k.next;
}

bool RandomThenGridSampler::AllSettled(const Study& study, int64_t end) const {
  struct Count {
    bool done = false;
    int64_t failures = 0, node_losses = 0;
  };
  std::vector<Count> counts(static_cast<size_t>(end));
  for (const Trial& t : study.trials) {
    if (t.point < 0 || t.point >= end) continue;
    Count& c = counts[static_cast<size_t>(t.point)];
    c.done = c.done || t.state == TrialState::kComplete || t.state == TrialState::kPruned;
    if (CountsAsFailedAttempt(t)) ++c.failures;
    if (LostWithItsNode(t)) ++c.node_losses;
  }
  for (const Count& c : counts) {
    if (!c.done && c.failures <= config_.max_failures_per_trial &&
        c.node_losses <= kMaxNodeLosses) {
      return false;
    }
  }
  return true;
}

Study RandomThenGridSampler::TrialsBefore(const Study& study, int64_t end) {
  Study out;
  out.maximize = study.maximize;
  for (const Trial& t : study.trials) {
    if (t.point >= 0 && t.point < end) out.trials.push_back(t);
  }
  return out;
}

Availability RandomThenGridSampler::NextAvailability(const Study& study) {
  const int64_t next = NextUntakenPoint(study);
  if (next < random_points_) return Availability::kReady;
  if (!grid_.has_value()) {
    if (!AllSettled(study, random_points_)) return Availability::kWait;
    // The grid comes from the random phase's trials alone. They are the whole study when the
    // grid is first needed; a resumed sweep's study holds grid trials too, which LocalGrid
    // would drop as already run, shifting every later point.
    const Study random_phase = TrialsBefore(study, random_points_);
    std::vector<const Trial*> random_trials;
    for (const Trial& t : random_phase.trials) random_trials.push_back(&t);
    grid_ = LocalGrid(config_, random_phase, random_trials);
    climb_budget_ = std::max<int64_t>(0, LocalBound() - static_cast<int64_t>(grid_->size()));
    climbing_ = Climbs() && climb_budget_ > 0;
  }
  // The climb: once every planned point is settled, one round from the trials of those points
  // alone (so that a resumed study's later trials do not change it).
  while (climbing_ && next >= random_points_ + static_cast<int64_t>(grid_->size())) {
    const int64_t end = random_points_ + static_cast<int64_t>(grid_->size());
    if (!AllSettled(study, end)) return Availability::kWait;
    const Study settled = TrialsBefore(study, end);
    std::vector<Params> planned = *grid_;
    for (int64_t p = 0; p < random_points_; ++p) planned.push_back(PointParams(p));
    std::vector<Params> step = ClimbRound(settled, planned);
    FillSeats(settled, planned, &step);
    if (static_cast<int64_t>(step.size()) > climb_budget_) step.resize(climb_budget_);
    climb_budget_ -= static_cast<int64_t>(step.size());
    climbing_ = !step.empty() && climb_budget_ > 0;
    for (Params& p : step) grid_->push_back(std::move(p));
  }
  return next < random_points_ + static_cast<int64_t>(grid_->size()) ? Availability::kReady
                                                                     : Availability::kExhausted;
}

std::optional<int64_t> RandomThenGridSampler::PlannedTrials() const {
  if (!grid_.has_value() || climbing_) return std::nullopt;
  return random_points_ + static_cast<int64_t>(grid_->size());
}

SearchSpace RandomThenGridSampler::InferRelativeSearchSpace(const Study&, const Trial&) {
  return space_;  // both parameters are sampled jointly, from the plan
}

void RandomThenGridSampler::BeforeTrial(const Study& study, Trial* trial) {
  trial->point = NextUntakenPoint(study);
  trial->phase = trial->point < random_points_ ? "random" : "grid";
}

std::vector<Params> RandomThenGridSampler::ClimbRound(const Study& settled,
                                                      const std::vector<Params>& planned) {
  return ClimbStep(config_, settled, planned);
}

std::vector<Params> RandomThenGridSampler::LookAheadRound(const Study& settled,
                                                          const std::vector<Params>& planned) {
  return ClimbRound(settled, planned);
}

const Trial* RandomThenGridSampler::Incumbent(const Study& settled) const {
  return BestOnLattice(config_, settled).trial;
}

namespace {

// The value of one coordinate mirrored about the incumbent's (2c - v), in the space its grid
// is even in: list positions for value lists and batch sizes, log for log_uniform ranges,
// linear for the others; nullopt off the list or for string choices.
std::optional<double> MirrorValue(const SearchSettings& s, const std::string& name, double c,
                                  double v) {
  std::vector<double> list;
  const ParamSpec* spec = name == kLrParam ? &s.lr : nullptr;
  for (const ParamSpec& p : s.params) spec = p.name == name ? &p : spec;
  if (name == kBatchParam) {
    list.assign(s.batch_sizes.begin(), s.batch_sizes.end());
  } else if (spec == nullptr || !spec->labels.empty()) {
    return std::nullopt;
  } else if (spec->distribution == "categorical") {
    list = spec->values;
  } else if (spec->distribution == "log_uniform") {
    return c > 0 && v > 0 ? std::optional<double>(std::exp(2 * std::log(c) - std::log(v)))
                          : std::nullopt;
  } else {
    return 2 * c - v;
  }
  const auto at = [&](double x) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (SamePoint({{name, list[i]}}, {{name, x}})) return static_cast<int64_t>(i);
    }
    return int64_t{-1};
  };
  const int64_t i = at(c), j = at(v), m = 2 * i - j;
  if (i < 0 || j < 0 || m < 0 || m >= static_cast<int64_t>(list.size())) return std::nullopt;
  return list[static_cast<size_t>(m)];
}

// How much better than the incumbent `centre` the point `q` is expected to be: the incumbent's
// value less that of the settled COMPLETE trial at q's mirror image about it (a straight-line
// extrapolation along the move); nullopt where none was run there.
std::optional<double> ExpectedGain(const SearchSettings& s, const Study& settled,
                                   const Trial& centre, const Params& q) {
  Params mirror = q;
  for (auto& [name, v] : mirror) {
    const auto c = centre.params.find(name);
    if (c == centre.params.end()) return std::nullopt;
    const std::optional<double> m = MirrorValue(s, name, c->second, v);
    if (!m.has_value()) return std::nullopt;
    v = *m;
  }
  for (const Trial& t : settled.trials) {
    if (t.state != TrialState::kComplete || !t.value.has_value() || std::isnan(*t.value) ||
        !SamePoint(t.params, mirror)) {
      continue;
    }
    return s.maximize ? *centre.value - *t.value : *t.value - *centre.value;
  }
  return std::nullopt;
}

}  // namespace

void RandomThenGridSampler::FillSeats(const Study& settled, std::vector<Params> planned,
                                      std::vector<Params>* round) {
  const size_t seats = static_cast<size_t>(std::max<int64_t>(1, config_.max_concurrent_trials));
  const Trial* centre = Incumbent(settled);
  if (round->size() >= seats || centre == nullptr) return;
  // The round's points expected to beat the incumbent, the most promising first.
  std::vector<std::pair<double, size_t>> likely;
  for (size_t i = 0; i < round->size(); ++i) {
    const std::optional<double> gain = ExpectedGain(config_, settled, *centre, (*round)[i]);
    if (gain.has_value() && *gain > 0) likely.push_back({-*gain, i});
  }
  std::stable_sort(likely.begin(), likely.end());
  for (const Params& p : *round) planned.push_back(p);
  for (const auto& [unused, i] : likely) {
    // The round that would follow if point i won: from a study where it is the best trial.
    Study winner = settled;
    Trial won;
    won.number = -1;
    won.state = TrialState::kComplete;
    won.params = (*round)[i];
    won.value = config_.maximize ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity();
    winner.trials.push_back(std::move(won));
    for (Params& p : LookAheadRound(winner, planned)) {
      if (round->size() >= seats) return;
      planned.push_back(p);
      round->push_back(std::move(p));
    }
  }
}

int64_t RandomThenGridSampler::LocalBound() const { return LocalGridBound(config_); }

Params RandomThenGridSampler::PointParams(int64_t point) const {
  if (point < random_points_) return random_.PointFor(point, space_);
  return grid_->at(static_cast<size_t>(point - random_points_));
}

Params RandomThenGridSampler::SampleRelative(const Study&, const Trial& trial, const SearchSpace&) {
  return PointParams(trial.point);
}

double RandomThenGridSampler::SampleIndependent(const Study& study, const Trial& trial,
                                                const std::string& name,
                                                const Distribution& distribution) {
  return random_.SampleIndependent(study, trial, name, distribution);
}

std::string FilledRoundsNote(const SearchSettings& s) {
  if (s.max_concurrent_trials <= 1) return "";
  return absl::StrFormat(", a round of fewer than %d points filled with the next round's likeliest",
                         s.max_concurrent_trials);
}

absl::Status TopKWithinRandom(const ConfigMap& search, const SearchSettings& s) {
  if (GridSpecOf(s).top_k <= RandomSpecOf(s).trials) return absl::OkStatus();
  absl::StatusOr<ConfigMap> grid = search.GetOptionalMap("grid");
  if (!grid.ok()) return grid.status();
  return grid->Error("top_k",
                     absl::StrCat("is ", GridSpecOf(s).top_k, " but the random phase runs only ",
                                  RandomSpecOf(s).trials, " trials"));
}

namespace {

absl::Status NoChecks(const ConfigMap&, const SearchSettings&) { return absl::OkStatus(); }

std::string DescribeRandom(const SearchSettings& s) {
  return absl::StrFormat("    random      %d trials, seed %d\n", RandomSpecOf(s).trials,
                         RandomSpecOf(s).seed);
}

std::string DescribeGrid(const SearchSettings& s) {
  return absl::StrFormat(
      "    grid        %d lr points x %d batch sizes%s\n",
      s.lr.distribution == "categorical" ? s.lr.values.size() : GridSpecOf(s).lr_points,
      s.batch_sizes.size(), s.params.empty() ? "" : " x the other parameters' values");
}

std::string ClimbDescription(const SearchSettings& s) {
  if (!GridSpecOf(s).climb) return "";
  return "; then climbs from the best grid point to its unrun neighbours (one grid lr and/or "
         "batch size away) until it is the best of them, within the same bound" +
         FilledRoundsNote(s);
}

std::string DescribeRandomThenGrid(const SearchSettings& s) {
  const double half = std::sqrt(GridSpecOf(s).lr_span);
  return DescribeRandom(s) +
         absl::StrFormat(
             "    grid        around each of the %d best random trials: the full grid's lrs (%d "
             "over the range) within [lr/%.3g, lr*%.3g] (slid inside the range at a bound) x "
             "its batch and %d neighbour(s) each side%s, minus points already run%s\n",
             GridSpecOf(s).top_k, GridSpecOf(s).lr_points, half, half,
             GridSpecOf(s).batch_neighbors,
             s.params.empty() ? "" : ", the other parameters at its values", ClimbDescription(s));
}

int64_t RandomTrials(const SearchSettings& s) { return RandomSpecOf(s).trials; }
int64_t NoRandomTrials(const SearchSettings&) { return 0; }
int64_t RandomThenGridTrials(const SearchSettings& s) {
  return SaturatingAdd(RandomSpecOf(s).trials, LocalGridBound(s));
}

std::unique_ptr<Sampler> Make(const SearchSettings& s) {
  return std::make_unique<RandomThenGridSampler>(s);
}

}  // namespace

const SamplerKind& RandomSearchKind() {
  static const auto* const kKind = new SamplerKind{
      "random", NoChecks, DescribeRandom, RandomTrials, RandomTrials, Make, {&RandomSection()}};
  return *kKind;
}

const SamplerKind& GridSearchKind() {
  static const auto* const kKind = new SamplerKind{"grid",
                                                   NoChecks,
                                                   DescribeGrid,
                                                   FullGridTrials,
                                                   NoRandomTrials,
                                                   Make,
                                                   {&RandomSection(), &GridSection()}};
  return *kKind;
}

const SamplerKind& RandomThenGridKind() {
  static const auto* const kKind = new SamplerKind{"random_then_grid",
                                                   TopKWithinRandom,
                                                   DescribeRandomThenGrid,
                                                   RandomThenGridTrials,
                                                   RandomTrials,
                                                   Make,
                                                   {&RandomSection(), &GridSection()}};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
