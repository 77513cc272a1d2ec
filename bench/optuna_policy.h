// Optuna 3.1's samplers (TPESampler, RandomSampler) and pruners (MedianPruner,
// SuccessiveHalvingPruner, HyperbandPruner) as a bench/sweep_replay.h Policy, so that they
// replay on the same table, with the same concurrency and the same accounting, as tunefleet's
// sweep. Optuna runs in a child process, bench/optuna_policy.py under Debian's python3, spoken
// to in JSON lines over its stdin and stdout; its study has the sweep's name (HyperbandPruner
// hashes it) and the sweep's search space, and asks up to max_concurrent_trials trials ahead
// of their results, as a parallel Optuna study does.
//
// Thread-safety: one thread.
#ifndef TUNEFLEET_BENCH_OPTUNA_POLICY_H_
#define TUNEFLEET_BENCH_OPTUNA_POLICY_H_

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "bench/sweep_replay.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace bench {

class OptunaPolicy : public Policy {
 public:
  struct Options {
    std::string python = "/usr/bin/python3";
    std::string script;           // bench/optuna_policy.py
    std::string sampler = "tpe";  // tpe | random
    // TPESampler's settings as a JSON object (search.tpe's keys, hpo/samplers/search_settings.h:
    // n_startup_trials, n_ei_candidates, gamma, prior_weight, consider_*, multivariate); "{}":
    // Optuna's defaults.
    std::string tpe_json = "{}";
    uint64_t seed = 0;
    std::string study_name;
    bool maximize = true;
    std::string pruner_json;  // the settings, as the study user attr "pruner" holds them
    hpo::SearchSpace space;
  };
  static absl::StatusOr<std::unique_ptr<OptunaPolicy>> Launch(const Options& options);
  ~OptunaPolicy() override;

  absl::StatusOr<std::optional<Started>> Start() override;
  absl::StatusOr<bool> Report(int64_t trial, int64_t samples, double value, bool final) override;
  absl::Status End(int64_t trial, bool completed) override;
  bool Exhausted() override { return false; }  // Optuna samples forever: bound the compute

 private:
  OptunaPolicy() = default;
  // Sends one JSON line and reads the answer line.
  absl::StatusOr<std::string> Call(const std::string& line);

  hpo::SearchSpace space_;
  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
};

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_BENCH_OPTUNA_POLICY_H_
