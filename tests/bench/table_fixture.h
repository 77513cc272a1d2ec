// A small full-grid journal for the benchmark's tests: lr 1e-4, 1e-3, 1e-2 x batch 16, 64 (in
// that order, trials 0..5), curves over 800 samples evaluated at 200, 400, 600 and 800 (the
// final value), the value at k samples (lr index + 1) * k / 8000 + batch / 1000.
#ifndef TUNEFLEET_TESTS_BENCH_TABLE_FIXTURE_H_
#define TUNEFLEET_TESTS_BENCH_TABLE_FIXTURE_H_

#include <cstdint>
#include <string>

#include "hpo/search_space.h"

namespace tunefleet {
namespace bench {

// The grid's search space: lr log float [1e-4, 1e-2], batch_size integer choices {16, 64}.
hpo::SearchSpace GridSpace();

// Writes it to TempDir()/NAME and returns the path. With `steps`, as the previous version
// journaled it: keys are optimizer steps (samples / batch) and the final value is no
// intermediate one, and the study has no "resource" attr.
std::string WriteGridJournal(const std::string& name, bool steps = false);

// The value of the fixture's point (lr index i, batch) at k samples.
double GridValue(int i, double batch, int64_t k);

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTS_BENCH_TABLE_FIXTURE_H_
