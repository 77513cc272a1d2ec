#include "hpo/samplers/random_sampler.h"

#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "common/split_mix64.h"
#include "common/status_macros.h"
#include "hpo/config/config_checks.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kSection[] = "random";

absl::StatusOr<std::shared_ptr<const void>> ParseRandom(const ConfigMap& random) {
  auto spec = std::make_shared<RandomPhaseSpec>();
  RETURN_IF_ERROR(random.AllowOnly({"trials", "seed"}));
  RETURN_IF_ERROR(GetAtLeast(random, "trials", &spec->trials, 1));
  RETURN_IF_ERROR(GetAtLeast(random, "seed", &spec->seed, 0));
  return std::shared_ptr<const void>(std::move(spec));
}

uint64_t HashName(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

const SamplerSection& RandomSection() {
  static const auto* const kSectionEntry = new SamplerSection{kSection, ParseRandom};
  return *kSectionEntry;
}

const RandomPhaseSpec& RandomSpecOf(const SearchSettings& settings) {
  return SectionOf<RandomPhaseSpec>(settings, kSection);
}

RandomPhaseSpec& MutableRandomSpec(SearchSettings* settings) {
  return MutableSection<RandomPhaseSpec>(settings, kSection);
}

Availability RandomSampler::NextAvailability(const Study& study) {
  if (max_trials_ >= 0 && static_cast<int64_t>(study.trials.size()) >= max_trials_) {
    return Availability::kExhausted;
  }
  return Availability::kReady;
}

double RandomSampler::Draw(int64_t number, const std::string& name,
                           const Distribution& distribution) const {
  // A generator per (seed, trial, parameter): std::mt19937_64's output is fixed by the standard,
  // and the conversion to [0, 1) is ours, so points are the same on every platform.
  std::mt19937_64 rng(
      SplitMix64(seed_ ^ SplitMix64(static_cast<uint64_t>(number)) ^ HashName(name)));
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  if (distribution.kind == Distribution::Kind::kInt) {
    const double n = distribution.high - distribution.low + 1;
    return std::min(distribution.high, distribution.low + std::floor(u * n));
  }
  if (distribution.kind == Distribution::Kind::kCategorical) {
    size_t i = static_cast<size_t>(u * static_cast<double>(distribution.choices.size()));
    if (i >= distribution.choices.size()) i = distribution.choices.size() - 1;
    return distribution.choices[i];
  }
  if (distribution.log) {
    const double lo = std::log(distribution.low), hi = std::log(distribution.high);
    return std::min(distribution.high, std::max(distribution.low, std::exp(lo + u * (hi - lo))));
  }
  return distribution.low + u * (distribution.high - distribution.low);
}

double RandomSampler::SampleIndependent(const Study&, const Trial& trial, const std::string& name,
                                        const Distribution& distribution) {
  return Draw(trial.number, name, distribution);
}

Params RandomSampler::PointFor(int64_t number, const SearchSpace& space) const {
  Params params;
  for (const auto& [name, distribution] : space) params[name] = Draw(number, name, distribution);
  return params;
}

}  // namespace hpo
}  // namespace tunefleet
