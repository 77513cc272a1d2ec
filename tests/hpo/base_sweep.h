// The sweep YAML the sweep config tests start from (kBase: a synthetic trainer, random_then_grid
// search, a median pruner, 15 lines) and their helpers: a line of it replaced, written to a
// file, loaded (tests/hpo/trainer_in_process.h), a bad line's error checked.
#ifndef TUNEFLEET_TESTS_HPO_BASE_SWEEP_H_
#define TUNEFLEET_TESTS_HPO_BASE_SWEEP_H_

#include <string>
#include <vector>

#include "hpo/config/sweep_config.h"

namespace tunefleet {
namespace hpo {

// The field `key` of the pruner's settings as the journal records them (PrunerSettings::Json),
// as JSON text ("3", "\"auto\""); "" when absent.
std::string PrunerField(const SweepConfig& c, const std::string& key);

// Writes `text` to the test's temporary folder as `name`; returns its path.
std::string WriteFile(const std::string& name, const std::string& text);

// The base sweep with line `line` (1-based; 0: none) replaced by `text`.
std::string BaseWith(int line, const std::string& text);

// The message of the error that loading `path` (with `overrides`) gives; "" when it loads.
std::string LoadError(const std::string& path, const std::vector<std::string>& overrides = {});

// A bad input: line `line` of kBase replaced by `text` makes an error that names that line,
// "FILE:LINE: " followed by `message`.
struct BadCase {
  int line;
  const char* text;
  const char* message;
};
// Expects `bad`'s sweep to fail to load with its message (a gtest expectation).
void ExpectNamesFileLineAndKey(const BadCase& bad);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_HPO_BASE_SWEEP_H_
