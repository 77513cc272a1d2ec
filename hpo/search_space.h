// The search space of a sweep, in Optuna's distribution shapes so the journal can record them:
//   lr          FloatDistribution(low, high, log)  or CategoricalDistribution(choices)
//   batch_size  CategoricalDistribution(choices)   (per-rank batch sizes, ascending)
//   trainer keys (hpo/config/sweep_parameters.h): FloatDistribution, IntDistribution(low, high) or
//               CategoricalDistribution (numbers, or strings held by their index)
#ifndef TUNEFLEET_HPO_SEARCH_SPACE_H_
#define TUNEFLEET_HPO_SEARCH_SPACE_H_

#include <map>
#include <string>
#include <vector>

#include "hpo/samplers/search_settings.h"

namespace tunefleet {
namespace hpo {

struct Distribution {
  enum class Kind { kFloat, kInt, kCategorical };
  Kind kind = Kind::kFloat;
  double low = 0;   // kFloat, kInt (integral)
  double high = 0;  // kFloat, kInt
  bool log = false;
  // kCategorical: the values; for string choices, their indices 0, 1, ... with `labels`.
  std::vector<double> choices;
  bool integer_choices = false;     // choices are integers (batch sizes)
  std::vector<std::string> labels;  // string choices (Optuna's choices are these)

  bool Contains(double value) const;
  // Optuna's distribution_to_json: {"name": "FloatDistribution", "attributes": {...}}.
  std::string ToOptunaJson() const;
  // Optuna's internal representation of a value (the choice index for categoricals).
  double ToInternal(double external) const;
  double ToExternal(double internal) const;
  std::string Describe() const;  // "log_uniform [1e-05, 0.001]", "categorical {16, 32}"
  // A value as Python prints it: "0.001", "16", "cls".
  std::string ValueText(double value) const;
};

using SearchSpace = std::map<std::string, Distribution>;

inline constexpr char kLrParam[] = "lr";
inline constexpr char kBatchParam[] = "batch_size";

SearchSpace BuildSearchSpace(const SearchSettings& config);
// The distribution of one parameter spec.
Distribution ToDistribution(const ParamSpec& spec);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SEARCH_SPACE_H_
