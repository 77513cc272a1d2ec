// PercentilePruner: the percentile (and its flip for a maximized study), median as its 50th
// percentile, and its YAML entry's checks, words and journal attr. Its decisions are compared
// with Optuna 3.1's PercentilePruner in pruner_differential_test and
// tests/integration/pruner_replay_test.sh.
#include "hpo/pruners/percentile_pruner.h"

#include <map>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/pruner_registry.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

PercentileSpec Spec(double percentile, int64_t n_startup_trials = 0) {
  PercentileSpec s;
  s.percentile = percentile;
  s.n_startup_trials = n_startup_trials;
  return s;
}

// Four COMPLETE trials reporting 1, 2, 3, 4 at step 1, and a RUNNING one reporting `value`.
Study Study4(bool maximize, double value) {
  Study study;
  study.maximize = maximize;
  for (double v : {1.0, 2.0, 3.0, 4.0}) {
    const size_t i = AddTrial(&study, TrialState::kComplete, {{1, v}});
    study.trials[i].value = v;
  }
  AddTrial(&study, TrialState::kRunning, {{1, value}});
  return study;
}

TEST(PercentilePrunerTest, KeepsTheBestPercentOfTrials) {
  // Minimize at 25: np.nanpercentile([1, 2, 3, 4], 25) = 1.75; worse (above) is pruned.
  Study lo = Study4(false, 2.0);
  EXPECT_TRUE(PercentilePruner(Spec(25)).Prune(&lo, 4));
  lo = Study4(false, 1.5);
  EXPECT_FALSE(PercentilePruner(Spec(25)).Prune(&lo, 4));
  // Maximize at 25: the 75th percentile, 3.25; below is pruned.
  Study hi = Study4(true, 3.0);
  EXPECT_TRUE(PercentilePruner(Spec(25)).Prune(&hi, 4));
  hi = Study4(true, 3.5);
  EXPECT_FALSE(PercentilePruner(Spec(25)).Prune(&hi, 4));
  // 0 prunes everything not at least as good as the best; 100 only what is worse than all.
  hi = Study4(true, 3.9);
  EXPECT_TRUE(PercentilePruner(Spec(0)).Prune(&hi, 4));
  hi = Study4(true, 1.0);
  EXPECT_FALSE(PercentilePruner(Spec(100)).Prune(&hi, 4));
}

TEST(PercentilePrunerTest, MedianIsTheFiftiethPercentile) {
  for (bool maximize : {false, true}) {
    for (double v : {1.0, 2.4, 2.5, 2.6, 4.0}) {
      Study a = Study4(maximize, v), b = Study4(maximize, v);
      EXPECT_EQ(PercentilePruner(Spec(50)).Prune(&a, 4), MedianPruner(MedianSpec{0}).Prune(&b, 4))
          << maximize << " " << v;
    }
  }
}

absl::StatusOr<PrunerSettingsPtr> Parse(const std::string& yaml) {
  absl::StatusOr<ConfigFile> file = ConfigFile::Parse(yaml, "t.yaml");
  if (!file.ok()) return file.status();
  absl::StatusOr<ConfigMap> root = file->Root();
  std::vector<std::string> notes;
  return ParseEarlyTerminate(*root, &notes);
}

TEST(PercentilePrunerTest, ItsEntryChecksDescribesAndJournalsItsSettings) {
  EXPECT_NE(
      Parse("{type: percentile}").status().message().find("missing required key 'percentile'"),
      std::string::npos);
  EXPECT_EQ(Parse("{type: percentile, percentile: 100.5}").status().message(),
            "t.yaml:1: percentile: must be in [0, 100], got 100.5");
  EXPECT_EQ(Parse("{type: percentile, percentile: -1}").status().message(),
            "t.yaml:1: percentile: must be in [0, 100], got -1");
  EXPECT_NE(Parse("{type: percentile, percentile: .nan}")
                .status()
                .message()
                .find("percentile: expected a finite number"),
            std::string::npos);
  EXPECT_EQ(Parse("{type: percentile, percentile: 5, interval_steps: 0}").status().message(),
            "t.yaml:1: interval_steps: must be >= 1, got 0");
  EXPECT_EQ(Parse("{type: percentile, percentile: 5, min_resource: 3}").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<PrunerSettingsPtr> s = Parse(
      "{type: percentile, percentile: 25, n_startup_trials: 3, n_warmup_steps: 128, "
      "interval_steps: 64, n_min_trials: 2}");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->type(), "percentile");
  EXPECT_EQ((*s)->Json(),
            "{\"type\": \"percentile\", \"percentile\": 25.0, \"n_startup_trials\": 3, "
            "\"n_warmup_steps\": 128, \"interval_steps\": 64, \"n_min_trials\": 2}");
  EXPECT_EQ((*s)->Describe(true),
            "percentile (Optuna PercentilePruner: percentile=25, n_startup_trials=3, "
            "n_warmup_steps=128, interval_steps=64, n_min_trials=2; steps are samples): once 3 "
            "trial(s) have completed, from 128 samples on and then every 64 samples, stop a "
            "trial whose best value so far is below the 75th percentile of the completed "
            "trials' values at the same samples (it keeps the best 25%)");
  EXPECT_NE((*s)->Describe(false).find("is above the 25th percentile"), std::string::npos);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
