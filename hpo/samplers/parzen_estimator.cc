#include "hpo/samplers/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tunefleet {
namespace hpo {
namespace {

constexpr double kEps = 1e-12;            // parzen_estimator.EPS
constexpr double kSigma0Magnitude = 0.2;  // parzen_estimator.SIGMA0_MAGNITUDE
constexpr double kInf = std::numeric_limits<double>::infinity();

double Ndtr(double a) {  // _truncnorm._ndtr_single
  const double x = a / std::sqrt(2.0);
  if (x < -1 / std::sqrt(2.0)) return 0.5 * std::erfc(-x);
  if (x < 1 / std::sqrt(2.0)) return 0.5 + 0.5 * std::erf(x);
  return 1.0 - 0.5 * std::erfc(x);
}

double NdtrCentral(double a) { return 0.5 + 0.5 * std::erf(a / std::sqrt(2.0)); }  // _ndtr

double LogNdtr(double a) {  // _truncnorm._log_ndtr_single
  if (a > 6) return -Ndtr(-a);
  if (a > -20) return std::log(Ndtr(a));
  const double log_lhs = -0.5 * a * a - std::log(-a) - 0.5 * std::log(2 * M_PI);
  double last_total = 0, rhs = 1, numerator = 1, denom_factor = 1, sign = 1;
  const double denom_cons = 1 / (a * a);
  for (int i = 1; std::fabs(last_total - rhs) > std::numeric_limits<double>::epsilon(); ++i) {
    last_total = rhs;
    sign = -sign;
    denom_factor *= denom_cons;
    numerator *= 2 * i - 1;
    rhs += sign * numerator * denom_factor;
  }
  return log_lhs + std::log(rhs);
}

double LogAddExp(double x, double y) {
  if (x == -kInf) return y;
  if (y == -kInf) return x;
  const double m = std::max(x, y);
  return m + std::log1p(std::exp(-std::fabs(x - y)));
}

double LogDiff(double log_p, double log_q) { return log_p + std::log1p(-std::exp(log_q - log_p)); }

// _truncnorm._ndtri_exp_single: the x with log Phi(x) = y, by 100 bisections of [-100, 100].
double NdtriExp(double y) {
  double a = -100, b = 100, m = 0;
  if (LogNdtr(a) > y) std::swap(a, b);
  for (int i = 0; i < 100; ++i) {
    m = (a + b) / 2;
    if (LogNdtr(m) < y) {
      a = m;
    } else {
      b = m;
    }
  }
  return m;
}

double LogSumExp(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) m = std::max(m, x);
  if (!std::isfinite(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return std::log(s) + m;
}

double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The index i with cum[i - 1] <= u < cum[i] of the running sums of `p` (numpy's choice with p,
// and _sample_from_categorical_dist: how many running sums lie below u).
size_t Pick(const std::vector<double>& p, double u) {
  double cum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    cum += p[i];
    if (cum > u) return i;
  }
  return p.size() - 1;
}

}  // namespace

double LogGaussMass(double a, double b) {
  if (b <= 0) return LogDiff(LogNdtr(b), LogNdtr(a));
  if (a > 0) return LogDiff(LogNdtr(-a), LogNdtr(-b));
  return std::log1p(-NdtrCentral(a) - NdtrCentral(-b));
}

double TruncnormPpf(double q, double a, double b) {
  if (a == b) return std::nan("");
  if (q == 0) return a;
  if (q == 1) return b;
  if (a < 0) return NdtriExp(LogAddExp(LogNdtr(a), std::log(q) + LogGaussMass(a, b)));
  return -NdtriExp(LogAddExp(LogNdtr(-b), std::log1p(-q) + LogGaussMass(a, b)));
}

double TruncnormLogPdf(double x, double a, double b, double loc, double scale) {
  x = (x - loc) / scale;
  if (a == b) return std::nan("");
  if (x < a || b < x) return -kInf;
  return -(x * x) / 2.0 - std::log(std::sqrt(2 * M_PI)) - LogGaussMass(a, b);
}

std::vector<double> DefaultWeights(int64_t n) {
  if (n <= 0) return {};
  if (n < 25) return std::vector<double>(static_cast<size_t>(n), 1.0);
  // np.linspace(1 / n, 1, n - 25), then 25 ones.
  std::vector<double> w;
  const int64_t num = n - 25;
  const double start = 1.0 / static_cast<double>(n);
  const double step = num > 1 ? (1.0 - start) / static_cast<double>(num - 1) : 0.0;
  for (int64_t i = 0; i < num; ++i) w.push_back(start + static_cast<double>(i) * step);
  if (num > 1) w.back() = 1.0;
  w.resize(static_cast<size_t>(n), 1.0);
  return w;
}

ParzenEstimator::ParzenEstimator(const Observations& observations, const SearchSpace& space,
                                 const ParzenSettings& settings)
    : space_(space), settings_(settings) {
  n_ = observations.empty() ? 0 : static_cast<int64_t>(observations.begin()->second.size());
  const bool prior = settings_.consider_prior || n_ == 0;
  weights_ = DefaultWeights(n_);
  if (prior) weights_.push_back(settings_.prior_weight);
  const double sum = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  for (double& w : weights_) w /= sum;
  // Scott's rule over the parameters observed (multivariate only).
  const double sigma0 =
      kSigma0Magnitude * std::pow(static_cast<double>(std::max<int64_t>(n_, 1)),
                                  -1.0 / (static_cast<double>(observations.size()) + 4));
  for (const auto& [name, d] : space_) {
    const std::vector<double>& observed = observations.at(name);
    if (d.kind == Distribution::Kind::kCategorical) {
      FitCategorical(name, d, observed);
    } else {
      FitNumerical(name, d, observed, sigma0);
    }
  }
}

void ParzenEstimator::FitNumerical(const std::string& name, const Distribution& d,
                                   const std::vector<double>& observed, double sigma0) {
  Numerical& p = numerical_[name];
  p.discrete = d.kind == Distribution::Kind::kInt && !d.log;
  const double widen = d.kind == Distribution::Kind::kInt ? 0.5 : 0.0;  // half the int step
  p.low = d.low - widen;
  p.high = d.high + widen;
  if (d.log) {
    p.low = std::log(p.low);
    p.high = std::log(p.high);
  }
  const bool prior = settings_.consider_prior || n_ == 0;
  const double range = p.high - p.low;
  for (double x : observed) p.mus.push_back(d.log ? std::log(x) : x);
  if (prior) p.mus.push_back(0.5 * (p.low + p.high));
  const size_t m = p.mus.size();
  p.sigmas.assign(m, 0.0);
  if (settings_.multivariate) {
    std::fill(p.sigmas.begin(), p.sigmas.end(), sigma0 * range);
  } else {
    std::vector<size_t> order(m);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t i, size_t j) { return p.mus[i] < p.mus[j]; });
    std::vector<double> e{p.low};  // the sorted mus between the bounds
    for (size_t i : order) e.push_back(p.mus[i]);
    e.push_back(p.high);
    std::vector<double> sorted(m);
    for (size_t i = 0; i < m; ++i) sorted[i] = std::max(e[i + 1] - e[i], e[i + 2] - e[i + 1]);
    if (!settings_.consider_endpoints && e.size() >= 4) {
      sorted[0] = e[2] - e[1];
      sorted[m - 1] = e[m] - e[m - 1];
    }
    for (size_t i = 0; i < m; ++i) p.sigmas[order[i]] = sorted[i];
  }
  const double max_sigma = range;
  const double min_sigma =
      settings_.consider_magic_clip ? range / std::min(100.0, 1.0 + static_cast<double>(m)) : kEps;
  for (double& s : p.sigmas) s = std::clamp(s, min_sigma, max_sigma);
  if (prior) p.sigmas[static_cast<size_t>(n_)] = range;
}

void ParzenEstimator::FitCategorical(const std::string& name, const Distribution& d,
                                     const std::vector<double>& observed) {
  const bool prior = settings_.consider_prior || n_ == 0;
  const size_t rows = static_cast<size_t>(n_) + (prior ? 1 : 0);
  const double value = settings_.prior_weight / static_cast<double>(prior ? n_ + 1 : n_);
  std::vector<std::vector<double>> w(rows, std::vector<double>(d.choices.size(), value));
  for (size_t j = 0; j < observed.size(); ++j) w[j][static_cast<size_t>(observed[j])] += 1;
  for (std::vector<double>& row : w) {
    const double sum = std::accumulate(row.begin(), row.end(), 0.0);
    for (double& x : row) x /= sum;
  }
  categorical_[name] = std::move(w);
}

Observations ParzenEstimator::Sample(std::mt19937_64& rng, int64_t size) const {
  std::vector<size_t> active;
  for (int64_t i = 0; i < size; ++i) active.push_back(Pick(weights_, Uniform(rng)));
  Observations out;
  for (const auto& [name, d] : space_) {
    std::vector<double>& column = out[name];
    for (size_t j : active) {
      if (d.kind == Distribution::Kind::kCategorical) {
        column.push_back(static_cast<double>(Pick(categorical_.at(name)[j], Uniform(rng))));
        continue;
      }
      const Numerical& p = numerical_.at(name);
      const double mu = p.mus[j], sigma = p.sigmas[j];
      double x = TruncnormPpf(Uniform(rng), (p.low - mu) / sigma, (p.high - mu) / sigma);
      x = x * sigma + mu;
      // _transform_from_uniform; a log float is clipped too (exp may pass a bound by an ulp).
      if (d.log) x = std::exp(x);
      if (d.kind == Distribution::Kind::kInt) {  // np.round: halves to even
        x = d.log ? std::nearbyint(x) : std::nearbyint(x - d.low) + d.low;
      }
      column.push_back(std::clamp(x, d.low, d.high));
    }
  }
  return out;
}

std::vector<double> ParzenEstimator::LogPdf(const Observations& samples) const {
  const size_t count = samples.empty() ? 0 : samples.begin()->second.size();
  const size_t components = weights_.size();
  // component_log_pdf[i][j]: sample i under component j, summed over the parameters.
  std::vector<std::vector<double>> lp(count, std::vector<double>(components, 0.0));
  for (const auto& [name, d] : space_) {
    const std::vector<double>& xs = samples.at(name);
    for (size_t i = 0; i < count; ++i) {
      for (size_t j = 0; j < components; ++j) {
        if (d.kind == Distribution::Kind::kCategorical) {
          lp[i][j] += std::log(categorical_.at(name)[j][static_cast<size_t>(xs[i])]);
          continue;
        }
        const Numerical& p = numerical_.at(name);
        const double mu = p.mus[j], sigma = p.sigmas[j];
        const double x = d.log ? std::log(xs[i]) : xs[i];
        const double a = (p.low - mu) / sigma, b = (p.high - mu) / sigma;
        if (!p.discrete) {
          lp[i][j] += TruncnormLogPdf(x, a, b, mu, sigma);
        } else {
          const double upper = std::min(x + 0.5, p.high), lower = std::max(x - 0.5, p.low);
          lp[i][j] += LogGaussMass((lower - mu) / sigma, (upper - mu) / sigma) - LogGaussMass(a, b);
        }
      }
    }
  }
  std::vector<double> out;
  for (std::vector<double>& row : lp) {
    for (size_t j = 0; j < components; ++j) row[j] += std::log(weights_[j]);
    out.push_back(LogSumExp(row));
  }
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
