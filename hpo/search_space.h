// The search space of a sweep, in Optuna's distribution shapes so the journal can record them:
//   lr          FloatDistribution(low, high, log)  or CategoricalDistribution(choices)
//   batch_size  CategoricalDistribution(choices)   (per-rank batch sizes, ascending)
#ifndef TUNEFLEET_HPO_SEARCH_SPACE_H_
#define TUNEFLEET_HPO_SEARCH_SPACE_H_

#include <map>
#include <string>
#include <vector>

#include "hpo/sweep_config.h"

namespace tunefleet {
namespace hpo {

struct Distribution {
  enum class Kind { kFloat, kCategorical };
  Kind kind = Kind::kFloat;
  double low = 0;   // kFloat
  double high = 0;  // kFloat
  bool log = false;
  std::vector<double> choices;  // kCategorical
  bool integer_choices = false; // choices are integers (batch sizes)

  bool Contains(double value) const;
  // Optuna's distribution_to_json: {"name": "FloatDistribution", "attributes": {...}}.
  std::string ToOptunaJson() const;
  // Optuna's internal representation of a value (the choice index for categoricals).
  double ToInternal(double external) const;
  double ToExternal(double internal) const;
  std::string Describe() const;  // "log_uniform [1e-05, 0.001]", "categorical {16, 32}"
};

using SearchSpace = std::map<std::string, Distribution>;

inline constexpr char kLrParam[] = "lr";
inline constexpr char kBatchParam[] = "batch_size";

SearchSpace BuildSearchSpace(const SweepConfig& config);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SEARCH_SPACE_H_
