#include "hpo/samplers/random_then_grid_sampler.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hpo/samplers/grid_plan.h"
#include "hpo/samplers/grid_sampler.h"

namespace tunefleet {
namespace hpo {

RandomThenGridSampler::RandomThenGridSampler(const SearchSettings& config)
    : config_(config),
      space_(BuildSearchSpace(config)),
      random_(static_cast<uint64_t>(config.random.seed), -1),
      random_points_(config.method == "grid" ? 0 : config.random.trials) {
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

absl::Status TopKWithinRandom(const ConfigMap& search, const SearchSettings& s) {
  if (s.grid.top_k <= s.random.trials) return absl::OkStatus();
  absl::StatusOr<ConfigMap> grid = search.GetOptionalMap("grid");
  if (!grid.ok()) return grid.status();
  return grid->Error("top_k", absl::StrCat("is ", s.grid.top_k, " but the random phase runs only ",
                                           s.random.trials, " trials"));
}

namespace {

absl::Status NoChecks(const ConfigMap&, const SearchSettings&) { return absl::OkStatus(); }

std::string DescribeRandom(const SearchSettings& s) {
  return absl::StrFormat("    random      %d trials, seed %d\n", s.random.trials, s.random.seed);
}

std::string DescribeGrid(const SearchSettings& s) {
  return absl::StrFormat("    grid        %d lr points x %d batch sizes%s\n",
                         s.lr.distribution == "categorical" ? s.lr.values.size() : s.grid.lr_points,
                         s.batch_sizes.size(),
                         s.params.empty() ? "" : " x the other parameters' values");
}

std::string DescribeRandomThenGrid(const SearchSettings& s) {
  const double half = std::sqrt(s.grid.lr_span);
  return DescribeRandom(s) +
         absl::StrFormat(
             "    grid        around each of the %d best random trials: the full grid's lrs (%d "
             "over the range) within [lr/%.3g, lr*%.3g] (slid inside the range at a bound) x "
             "its batch and %d neighbour(s) each side%s, minus points already run%s\n",
             s.grid.top_k, s.grid.lr_points, half, half, s.grid.batch_neighbors,
             s.params.empty() ? "" : ", the other parameters at its values",
             s.grid.climb ? "; then climbs from the best grid point to its unrun neighbours "
                            "(one grid lr and/or batch size away) until it is the best of them, "
                            "within the same bound"
                          : "");
}

int64_t RandomTrials(const SearchSettings& s) { return s.random.trials; }
int64_t NoRandomTrials(const SearchSettings&) { return 0; }
int64_t RandomThenGridTrials(const SearchSettings& s) {
  return SaturatingAdd(s.random.trials, LocalGridBound(s));
}

std::unique_ptr<Sampler> Make(const SearchSettings& s) {
  return std::make_unique<RandomThenGridSampler>(s);
}

}  // namespace

const SamplerKind& RandomSearchKind() {
  static const auto* const kKind =
      new SamplerKind{"random", NoChecks, DescribeRandom, RandomTrials, RandomTrials, Make};
  return *kKind;
}

const SamplerKind& GridSearchKind() {
  static const auto* const kKind =
      new SamplerKind{"grid", NoChecks, DescribeGrid, FullGridTrials, NoRandomTrials, Make};
  return *kKind;
}

const SamplerKind& RandomThenGridKind() {
  static const auto* const kKind =
      new SamplerKind{"random_then_grid",   TopKWithinRandom, DescribeRandomThenGrid,
                      RandomThenGridTrials, RandomTrials,     Make};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
