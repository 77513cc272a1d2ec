// The Parzen estimator of Optuna 3.1's TPE (optuna/samplers/_tpe/parzen_estimator.py and
// _truncnorm.py), ported for hpo/samplers/tpe_sampler.h: a mixture with one component per
// observation (plus the prior's, when consider_prior) over a search space, fitted to the
// observations of the "below" or the "above" trials.
//
// Each numerical parameter's component is a normal truncated to [low, high]: for a log float
// the space is log(x) over [log low, log high]; an int (step 1) widens its range by half a step
// each side ([low - 0.5, high + 0.5], log of that for a log int) and its density is the mass of
// [x - 0.5, x + 0.5]. A categorical parameter's component is a distribution over its choices
// (indices: Optuna's internal form): prior_weight / (n + 1) everywhere plus 1 at the observed
// choice, normalized; the prior's row is uniform. Weights: DefaultWeights(n) for the
// observations (older ones ramped down from the 26th on), then prior_weight, normalized.
//
// Bandwidths: independent (one parameter): each mu's sigma is the larger distance to its
// sorted neighbours (low and high being the outer neighbours), the first and last taking their
// inner distance unless consider_endpoints; multivariate: 0.2 * n^(-1 / (d + 4)) * (high - low)
// for every mu (Scott's rule, as BOHB). Then clipped to [(high - low) / min(100, 1 + mus),
// high - low] (consider_magic_clip, else [1e-12, high - low]); the prior's mu is the middle of
// the range and its sigma the range.
//
// One quirk of 3.1 is kept on purpose, so that its acquisition is what we compare against: a
// continuous component's log density is log phi((x - mu) / sigma) - log Z, without the
// - log(sigma) of a normal density (3.1's _truncnorm.logpdf ignores its scale).
//
// Thread-safety: immutable after construction; Sample takes the caller's generator.
#ifndef TUNEFLEET_HPO_SAMPLERS_PARZEN_ESTIMATOR_H_
#define TUNEFLEET_HPO_SAMPLERS_PARZEN_ESTIMATOR_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {

struct ParzenSettings {
  bool consider_prior = true;
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
};

// Optuna's default_weights(n): n ones below 25; else a ramp from 1/n to 1 over the n - 25
// oldest, then 25 ones.
std::vector<double> DefaultWeights(int64_t n);

// Values per parameter, in Optuna's internal form (a categorical's choice index); every
// parameter holds the same number of observations, in trial order.
using Observations = std::map<std::string, std::vector<double>>;

class ParzenEstimator {
 public:
  // `observations` holds a column for each parameter of `space`.
  ParzenEstimator(const Observations& observations, const SearchSpace& space,
                  const ParzenSettings& settings);

  // `size` points drawn from the mixture (internal form; log floats back in their own scale).
  Observations Sample(std::mt19937_64& rng, int64_t size) const;
  // The mixture's log density at each point of `samples` (internal form).
  std::vector<double> LogPdf(const Observations& samples) const;

  // The fitted mixture, for tests: the components' weights, and per numerical parameter its
  // bounds in the estimator's space and the components' mus and sigmas; per categorical its
  // components' probabilities over the choices.
  const std::vector<double>& weights() const { return weights_; }
  struct Numerical {
    double low = 0, high = 0;
    bool discrete = false;  // an int: densities are the masses of [x - 0.5, x + 0.5]
    std::vector<double> mus, sigmas;
  };
  const std::map<std::string, Numerical>& numerical() const { return numerical_; }
  const std::map<std::string, std::vector<std::vector<double>>>& categorical() const {
    return categorical_;
  }

 private:
  void FitNumerical(const std::string& name, const Distribution& d,
                    const std::vector<double>& observed, double sigma0);
  void FitCategorical(const std::string& name, const Distribution& d,
                      const std::vector<double>& observed);

  SearchSpace space_;
  ParzenSettings settings_;
  int64_t n_ = 0;  // observations
  std::vector<double> weights_;
  std::map<std::string, Numerical> numerical_;
  std::map<std::string, std::vector<std::vector<double>>> categorical_;
};

// Optuna 3.1's _truncnorm, on the standard normal truncated to [a, b]: the log of its mass,
// its quantile function, and its log density (the quirk above: no scale term).
double LogGaussMass(double a, double b);
double TruncnormPpf(double q, double a, double b);
double TruncnormLogPdf(double x, double a, double b, double loc, double scale);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_PARZEN_ESTIMATOR_H_
