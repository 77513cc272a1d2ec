#include "tests/hpo/base_sweep.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

const char* const kBase[] = {
    "name: t",                                                                        // 1
    "metric: {name: eval/spearman, goal: maximize}",                                  // 2
    "trainer: {synthetic: {steps: 20, seconds_per_step: 0.0, noise: 0.0, seed: 0}}",  // 3
    "resources: {gpus_per_trial: 1}",                                                 // 4
    "parameters:",                                                                    // 5
    "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}",                    // 6
    "  batch_size: {values: [16, 32, 64, 128]}",                                      // 7
    "lr_scaling: {rule: linear, base_batch: 32}",                                     // 8
    "search:",                                                                        // 9
    "  method: random_then_grid",                                                     // 10
    "  random: {trials: 8, seed: 0}",                                                 // 11
    "  grid: {top_k: 2, lr_points: 5, lr_span: 4.0, batch_neighbors: 1}",             // 12
    "early_terminate: {type: median, n_startup_trials: 3, n_warmup_steps: 2, interval_steps: "
    "1}",                         // 13
    "max_concurrent_trials: 4",   // 14
    "max_failures_per_trial: 2",  // 15
};

}  // namespace

// The field `key` of the pruner's settings as the journal records them (PrunerSettings::Json),
// as JSON text ("3", "\"auto\""); "" when absent.
std::string PrunerField(const SweepConfig& c, const std::string& key) {
  const std::string json = c.pruner->Json();
  const std::string at = "\"" + key + "\": ";
  const size_t start = json.find(at);
  if (start == std::string::npos) return "";
  const size_t from = start + at.size();
  return json.substr(from, json.find_first_of(",}", from) - from);
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The base sweep with line `line` (1-based) replaced by `text`.
std::string BaseWith(int line, const std::string& text) {
  std::vector<std::string> lines(std::begin(kBase), std::end(kBase));
  if (line > 0) lines[line - 1] = text;
  return absl::StrJoin(lines, "\n") + "\n";
}

// The message of the error that loading `path` (with `overrides`) gives; "" when it loads.
std::string LoadError(const std::string& path, const std::vector<std::string>& overrides) {
  return std::string(LoadSweepConfigInProcess(path, overrides).status().message());
}

void ExpectNamesFileLineAndKey(const BadCase& bad) {
  const std::string path = WriteFile("bad_sweep.yaml", BaseWith(bad.line, bad.text));
  auto c = LoadSweepConfigInProcess(path);
  ASSERT_FALSE(c.ok()) << "accepted: " << bad.text;
  EXPECT_EQ(std::string(c.status().message()),
            path + ":" + std::to_string(bad.line) + ": " + bad.message);
}

}  // namespace hpo
}  // namespace tunefleet
