#include "hpo/samplers/tpe_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/split_mix64.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t HashName(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool Single(const Distribution& d) {
  if (d.kind == Distribution::Kind::kCategorical) return d.choices.size() == 1;
  return d.low == d.high;
}

// The number of COMPLETE (with a value) and PRUNED trials: Optuna's n.
int64_t Observed(const Study& study) {
  int64_t n = 0;
  for (const Trial& t : study.trials) {
    n +=
        (t.state == TrialState::kComplete && t.value.has_value()) || t.state == TrialState::kPruned;
  }
  return n;
}

}  // namespace

ObservationPairs GetObservationPairs(const Study& study, const SearchSpace& space) {
  const double sign = study.maximize ? -1.0 : 1.0;
  ObservationPairs out;
  for (const auto& [name, d] : space) out.values[name];
  for (const Trial& t : study.trials) {
    if (t.state == TrialState::kComplete) {
      if (!t.value.has_value()) continue;
      out.scores.emplace_back(-kInf, sign * *t.value);
    } else if (t.state == TrialState::kPruned) {
      if (t.intermediate_values.empty()) {
        out.scores.emplace_back(1.0, 0.0);
      } else {
        const auto& [step, value] = *t.intermediate_values.rbegin();
        out.scores.emplace_back(-static_cast<double>(step),
                                std::isnan(value) ? kInf : sign * value);
      }
    } else {
      continue;
    }
    for (const auto& [name, d] : space) {
      const auto it = t.params.find(name);
      double internal = it == t.params.end() ? std::nan("") : d.ToInternal(it->second);
      if (d.kind == Distribution::Kind::kCategorical && internal < 0) internal = std::nan("");
      out.values[name].push_back(internal);
    }
  }
  return out;
}

int64_t TpeBelowCount(double gamma, int64_t n) {
  return std::min<int64_t>(static_cast<int64_t>(std::ceil(gamma * static_cast<double>(n))), 25);
}

void SplitObservationPairs(const std::vector<std::pair<double, double>>& scores, int64_t n_below,
                           std::vector<size_t>* below, std::vector<size_t>* above) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Lexicographic (step key, value), NaN values last, as numpy's stable argsort of the pairs.
  const auto less = [&](size_t i, size_t j) {
    if (scores[i].first != scores[j].first) return scores[i].first < scores[j].first;
    const double a = scores[i].second, b = scores[j].second;
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a < b;
  };
  std::stable_sort(order.begin(), order.end(), less);
  const size_t cut = std::min(order.size(), static_cast<size_t>(std::max<int64_t>(n_below, 0)));
  below->assign(order.begin(), order.begin() + cut);
  above->assign(order.begin() + cut, order.end());
  std::sort(below->begin(), below->end());
  std::sort(above->begin(), above->end());
}

TpeSampler::TpeSampler(const SearchSettings& settings)
    : spec_(TpeSpecOf(settings)),
      seed_(static_cast<uint64_t>(RandomSpecOf(settings).seed)),
      max_failures_(settings.max_failures_per_trial),
      space_(BuildSearchSpace(settings)),
      random_(static_cast<uint64_t>(RandomSpecOf(settings).seed), -1) {}

Availability TpeSampler::NextAvailability(const Study& study) {
  int64_t points = 0;
  for (const Trial& t : study.trials) points = std::max(points, t.point + 1);
  return points < spec_.trials ? Availability::kReady : Availability::kExhausted;
}

void TpeSampler::BeforeTrial(const Study& study, Trial* trial) {
  int64_t points = 0;
  for (const Trial& t : study.trials) points = std::max(points, t.point + 1);
  trial->point = points;
  trial->phase = Observed(study) < spec_.n_startup_trials ? "random" : "tpe";
}

bool TpeSampler::Settled(const Study& study, int64_t point) const {
  return PointSettled(study, point, max_failures_);
}

SearchSpace TpeSampler::InferRelativeSearchSpace(const Study& study, const Trial&) {
  if (!spec_.multivariate) return {};
  // IntersectionSearchSpace(include_pruned=True): the parameters of every COMPLETE or PRUNED
  // trial (none before the first), less the single-valued.
  std::optional<SearchSpace> common;
  for (const Trial& t : study.trials) {
    if (t.state != TrialState::kComplete && t.state != TrialState::kPruned) continue;
    if (!common.has_value()) common = space_;
    for (auto it = common->begin(); it != common->end();) {
      it = t.params.count(it->first) > 0 ? std::next(it) : common->erase(it);
    }
  }
  SearchSpace out;
  if (!common.has_value()) return out;
  for (const auto& [name, d] : *common) {
    if (!Single(d)) out.emplace(name, d);
  }
  return out;
}

std::mt19937_64 TpeSampler::Generator(int64_t point, const std::string& stream) const {
  return std::mt19937_64(SplitMix64(SplitMix64(seed_ ^ 0x7470655f74706521ull) ^
                                    SplitMix64(static_cast<uint64_t>(point)) ^ HashName(stream)));
}

std::optional<Params> TpeSampler::Propose(const Study& study, int64_t point,
                                          const SearchSpace& space,
                                          const std::string& stream) const {
  const ObservationPairs pairs = GetObservationPairs(study, space);
  const int64_t n = static_cast<int64_t>(pairs.scores.size());
  if (n < spec_.n_startup_trials) return std::nullopt;
  std::vector<size_t> below_index, above_index;
  SplitObservationPairs(pairs.scores, TpeBelowCount(spec_.gamma, n), &below_index, &above_index);
  // Trials without the (first) parameter drop out of both sides.
  const std::vector<double>& first = pairs.values.begin()->second;
  Observations below, above;
  for (const auto& [name, column] : pairs.values) {
    for (size_t i : below_index) {
      if (!std::isnan(first[i])) below[name].push_back(column[i]);
    }
    for (size_t i : above_index) {
      if (!std::isnan(first[i])) above[name].push_back(column[i]);
    }
    below[name];
    above[name];
  }
  ParzenSettings settings;
  settings.consider_prior = spec_.consider_prior;
  settings.prior_weight = spec_.prior_weight;
  settings.consider_magic_clip = spec_.consider_magic_clip;
  settings.consider_endpoints = spec_.consider_endpoints;
  settings.multivariate = spec_.multivariate;
  const ParzenEstimator l(below, space, settings);
  const ParzenEstimator g(above, space, settings);
  std::mt19937_64 rng = Generator(point, stream);
  const Observations candidates = l.Sample(rng, spec_.n_ei_candidates);
  const std::vector<double> log_l = l.LogPdf(candidates);
  const std::vector<double> log_g = g.LogPdf(candidates);
  // np.argmax: the first largest score. Scores equal in exact arithmetic (a categorical's
  // choices seen equally often below and above) are equal in Optuna's arithmetic, so the first
  // candidate, a random one, wins; ours may differ in the last bits, which would favour one
  // choice every time, so scores within rounding of the largest count as equal.
  std::vector<double> score(log_l.size());
  double top = -kInf;
  for (size_t i = 0; i < score.size(); ++i) {
    score[i] = log_l[i] - log_g[i];
    top = std::max(top, score[i]);
  }
  size_t best = 0;
  while (best + 1 < score.size() && !(score[best] >= top - 1e-12 * std::max(1.0, std::fabs(top)))) {
    ++best;
  }
  Params out;
  for (const auto& [name, d] : space) out[name] = d.ToExternal(candidates.at(name)[best]);
  return out;
}

Params TpeSampler::SampleRelative(const Study& study, const Trial& trial,
                                  const SearchSpace& space) {
  if (space.empty()) return {};
  return Propose(study, trial.point, space, "").value_or(Params{});
}

double TpeSampler::SampleIndependent(const Study& study, const Trial& trial,
                                     const std::string& name, const Distribution& distribution) {
  const SearchSpace one{{name, distribution}};
  if (std::optional<Params> p = Propose(study, trial.point, one, name)) return p->at(name);
  return random_.PointFor(trial.point, one).at(name);
}

namespace {

absl::Status NoChecks(const ConfigMap&, const SearchSettings&) { return absl::OkStatus(); }

constexpr char kSection[] = "tpe";

// search.tpe (TpeSpec).
absl::StatusOr<std::shared_ptr<const void>> ParseTpe(const ConfigMap& tpe) {
  auto spec = std::make_shared<TpeSpec>();
  TpeSpec& t = *spec;
  RETURN_IF_ERROR(tpe.AllowOnly({"trials", "n_startup_trials", "n_ei_candidates", "gamma",
                                 "prior_weight", "consider_prior", "consider_magic_clip",
                                 "consider_endpoints", "multivariate"}));
  RETURN_IF_ERROR(GetAtLeast(tpe, "trials", &t.trials, 1));
  RETURN_IF_ERROR(GetAtLeast(tpe, "n_startup_trials", &t.n_startup_trials, 0));
  RETURN_IF_ERROR(GetAtLeast(tpe, "n_ei_candidates", &t.n_ei_candidates, 1));
  RETURN_IF_ERROR(tpe.GetOptional("gamma", &t.gamma));
  if (!(t.gamma > 0 && t.gamma <= 1)) {
    return tpe.Error("gamma", absl::StrCat("must be in (0, 1] (the share of the finished "
                                           "trials that are \"below\"), got ",
                                           t.gamma));
  }
  RETURN_IF_ERROR(tpe.GetOptional("prior_weight", &t.prior_weight));
  if (!(t.prior_weight > 0 && std::isfinite(t.prior_weight))) {
    return tpe.Error("prior_weight", absl::StrCat("must be > 0, got ", t.prior_weight));
  }
  RETURN_IF_ERROR(tpe.GetOptional("consider_prior", &t.consider_prior));
  RETURN_IF_ERROR(tpe.GetOptional("consider_magic_clip", &t.consider_magic_clip));
  RETURN_IF_ERROR(tpe.GetOptional("consider_endpoints", &t.consider_endpoints));
  RETURN_IF_ERROR(tpe.GetOptional("multivariate", &t.multivariate));
  return std::shared_ptr<const void>(std::move(spec));
}

std::string Describe(const SearchSettings& s) {
  const TpeSpec& t = TpeSpecOf(s);
  return absl::StrFormat(
             "    random      the first %d trials (while fewer have finished), seed %d\n",
             t.n_startup_trials, RandomSpecOf(s).seed) +
         absl::StrFormat(
             "    tpe         %d trials in all; Optuna 3.1's TPE, %s: the best "
             "min(ceil(%g n), 25) finished trials against the rest, the best of %d candidates; "
             "prior %s (weight %g), magic clip %s, endpoints %s\n",
             t.trials, t.multivariate ? "multivariate" : "independent", t.gamma, t.n_ei_candidates,
             t.consider_prior ? "on" : "off", t.prior_weight, t.consider_magic_clip ? "on" : "off",
             t.consider_endpoints ? "on" : "off");
}

int64_t Trials(const SearchSettings& s) { return TpeSpecOf(s).trials; }
int64_t StartupTrials(const SearchSettings& s) {
  return std::min(TpeSpecOf(s).n_startup_trials, TpeSpecOf(s).trials);
}

std::unique_ptr<Sampler> Make(const SearchSettings& s) { return std::make_unique<TpeSampler>(s); }

}  // namespace

const SamplerSection& TpeSection() {
  static const auto* const kSectionEntry = new SamplerSection{kSection, ParseTpe};
  return *kSectionEntry;
}

const TpeSpec& TpeSpecOf(const SearchSettings& settings) {
  return SectionOf<TpeSpec>(settings, kSection);
}

TpeSpec& MutableTpeSpec(SearchSettings* settings) {
  return MutableSection<TpeSpec>(settings, kSection);
}

const SamplerKind& TpeKind() {
  static const auto* const kKind = new SamplerKind{
      "tpe", NoChecks, Describe, Trials, StartupTrials, Make, {&RandomSection(), &TpeSection()}};
  return *kKind;
}

}  // namespace hpo
}  // namespace tunefleet
