// Search spaces, sweep configs, trials and non-finite numbers that several hpo tests share.
#ifndef TUNEFLEET_TESTS_HPO_HPO_TEST_UTIL_H_
#define TUNEFLEET_TESTS_HPO_HPO_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "hpo/config/sweep_config.h"
#include "hpo/samplers/sampler.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// lr: log float [1e-5, 1e-3]; batch_size: integer choices `batch_sizes`.
SearchSpace LrBatchSpace(const std::vector<double>& batch_sizes);
// LrBatchSpace({16, 32, 64, 128}) and a trainer key of each other kind
// (hpo/config/sweep_parameters.h): train.epochs int [1, 3], model.pooling categorical of strings
// (mean, cls, max), train.weight_decay uniform float [0, 0.1].
SearchSpace MixedSpace();

// Appends a trial numbered by its place, in `state`, with intermediate `values` (step -> value)
// and `system_attrs`; returns its index.
size_t AddTrial(Study* study, TrialState state, std::map<int64_t, double> values,
                std::map<std::string, double> system_attrs = {});

// The sweep config in the YAML `text` (named `file_name` in errors); a failed expectation, and
// a default config, when it does not parse.
SweepConfig ConfigFromYaml(const std::string& text, const std::string& file_name);

// Runs `sampler` on `study` one trial at a time, each COMPLETE with `value` of its params as
// soon as it is proposed (then AfterTrial), until the sampler has nothing ready (a failed
// expectation unless it is exhausted) or the study holds `stop_at` trials (-1: no limit), at
// most 1000 trials; returns the study.
Study RunCompleting(Sampler& sampler, const SearchSpace& space,
                    const std::function<double(const Params&)>& value, Study study = {},
                    int64_t stop_at = -1);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_HPO_HPO_TEST_UTIL_H_
