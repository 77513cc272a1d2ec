// What a sampler works from: the searched parameters, the study's direction and the `search`
// section's settings (hpo/config/sweep_config.h's SweepConfig derives from it, so a sweep's
// config is passed wherever these are wanted). Plain data, validated by whoever parses it
// (ParseSweepConfig, with the sampler's own checks: hpo/samplers/sampler_kind.h).
//
// Thread-safety: plain data; const use from several threads is safe.
#ifndef TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_
#define TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hpo/config/sweep_parameters.h"

namespace tunefleet {
namespace hpo {

using LrSpec = ParamSpec;

struct RandomPhaseSpec {
  int64_t trials = 8;
  int64_t seed = 0;
};

// The full grid's lr_points lrs over the range; random_then_grid's second phase refines on
// them (hpo/samplers/grid_sampler.h). Defaults from bench/search_efficiency (docs/BENCHMARKS.md).
struct GridPhaseSpec {
  int64_t top_k = 2;
  int64_t lr_points = 10;
  double lr_span = 10.0;
  int64_t batch_neighbors = 1;
  // Whether random_then_grid climbs from the grid's best to its better neighbours afterwards
  // (hpo/samplers/random_then_grid_sampler.h).
  bool climb = true;
};

// search.tpe: Optuna 3.1's TPESampler settings (hpo/samplers/tpe_sampler.h), its defaults;
// `gamma` is default_gamma's fraction: min(ceil(gamma * n), 25) trials are "below".
struct TpeSpec {
  int64_t trials = 40;  // the points it proposes in all (a sweep must end)
  int64_t n_startup_trials = 10;
  int64_t n_ei_candidates = 24;
  double gamma = 0.1;
  double prior_weight = 1.0;
  bool consider_prior = true;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;
  bool multivariate = false;
};

struct SearchSettings {
  bool maximize = true;  // metric.goal
  LrSpec lr;
  std::vector<int64_t> batch_sizes;  // ascending, unique
  // The other trainer keys searched, in file order (never lr or batch_size).
  std::vector<ParamSpec> params;
  // search.method: the sampler (hpo/samplers/all_samplers.h lists them).
  std::string method = "random_then_grid";
  RandomPhaseSpec random;
  GridPhaseSpec grid;
  TpeSpec tpe;
  int64_t max_failures_per_trial = 2;
  // The sweep's seats: trials that run at once. A climb round of fewer points fills the rest
  // with the next round's likeliest points (hpo/samplers/random_then_grid_sampler.h).
  int64_t max_concurrent_trials = 1;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SAMPLERS_SEARCH_SETTINGS_H_
