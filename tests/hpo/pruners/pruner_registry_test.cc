// The pruner registry: every type parses through its kind into settings that build its pruner,
// unknown types are refused, and the settings carry their own spec into the pruner.
#include "hpo/pruners/pruner_registry.h"

#include <limits>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "hpo/pruners/hyperband_pruner.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/percentile_pruner.h"
#include "hpo/pruners/successive_halving_pruner.h"

namespace tunefleet {
namespace hpo {
namespace {

// The settings of the early_terminate mapping `yaml`, resolved with `interval` samples.
PrunerSettingsPtr Settings(const std::string& yaml, int64_t interval = 1) {
  absl::StatusOr<ConfigFile> file = ConfigFile::Parse(yaml, "t.yaml");
  EXPECT_TRUE(file.ok()) << file.status();
  absl::StatusOr<ConfigMap> root = file->Root();
  std::vector<std::string> notes;
  absl::StatusOr<PrunerSettingsPtr> s = ParseEarlyTerminate(*root, &notes);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return NoPruning();
  absl::StatusOr<PrunerSettingsPtr> r = (*s)->Resolve({interval}, "t.yaml");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : NoPruning();
}

std::string ParseError(const std::string& yaml) {
  absl::StatusOr<ConfigFile> file = ConfigFile::Parse(yaml, "t.yaml");
  absl::StatusOr<ConfigMap> root = file->Root();
  std::vector<std::string> notes;
  return std::string(ParseEarlyTerminate(*root, &notes).status().message());
}

TEST(PrunerRegistryTest, MapsEachType) {
  EXPECT_EQ(PrunerTypes(), (std::vector<std::string>{"none", "median", "successive_halving",
                                                     "hyperband", "percentile"}));
  EXPECT_NE(dynamic_cast<NopPruner*>(Settings("{type: none}")->MakePruner().get()), nullptr);
  EXPECT_NE(dynamic_cast<MedianPruner*>(Settings("{type: median}")->MakePruner().get()), nullptr);
  EXPECT_NE(dynamic_cast<SuccessiveHalvingPruner*>(
                Settings("{type: successive_halving}")->MakePruner().get()),
            nullptr);
  EXPECT_NE(dynamic_cast<HyperbandPruner*>(Settings("{type: hyperband}")->MakePruner().get()),
            nullptr);
  EXPECT_NE(dynamic_cast<PercentilePruner*>(
                Settings("{type: percentile, percentile: 25}")->MakePruner().get()),
            nullptr);
  for (const std::string& type : PrunerTypes()) {
    EXPECT_EQ(FindPrunerKind(type)->type, type);
    EXPECT_EQ(
        Settings("{type: " + type + (type == "percentile" ? ", percentile: 5}" : "}"))->prunes(),
        type != "none");
  }
  EXPECT_EQ(FindPrunerKind("asha"), nullptr);
  EXPECT_EQ(ParseError("{type: asha}"),
            "t.yaml:1: type: expected one of none, median, successive_halving, hyperband, "
            "percentile; got 'asha'");
  EXPECT_FALSE(DefaultPrunerSettings("asha").ok());
  EXPECT_FALSE(DefaultPrunerSettings("percentile").ok());  // percentile is required
  EXPECT_EQ((*DefaultPrunerSettings("median"))->Json(),
            "{\"type\": \"median\", \"n_startup_trials\": 5, \"n_warmup_steps\": 0, "
            "\"interval_steps\": 1, \"n_min_trials\": 1}");
}

TEST(PrunerRegistryTest, PassesTheSpec) {
  Study study;
  study.maximize = false;
  for (double v : {1.0, 100.0}) {
    Trial t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.state = study.trials.empty() ? TrialState::kComplete : TrialState::kRunning;
    t.intermediate_values[0] = v;
    study.trials.push_back(t);
  }
  // 1 COMPLETE trial of 2 startup trials
  EXPECT_FALSE(Settings("{type: median, n_startup_trials: 2}")->MakePruner()->Prune(&study, 1));
  EXPECT_TRUE(Settings("{type: median, n_startup_trials: 1}")->MakePruner()->Prune(&study, 1));
}

TEST(PrunerRegistryTest, PassesTheHyperbandSpec) {
  // Study "sweep": trial 0 is in bracket 2 of 5 (max_resource 81, factor 3), whose rung 0 ends
  // at step 9; with max_resource 3 (2 brackets) it is in bracket 0, whose rung 0 ends at step 1.
  Study study;
  study.name = "sweep";
  study.trials.emplace_back();
  study.trials[0].intermediate_values[1] = 0.5;
  EXPECT_FALSE(Settings("{type: hyperband, min_resource: 1, max_resource: 81}")
                   ->MakePruner()
                   ->Prune(&study, 0));
  EXPECT_TRUE(study.trials[0].system_attrs.empty());
  EXPECT_FALSE(Settings("{type: hyperband, min_resource: 1, max_resource: 3}")
                   ->MakePruner()
                   ->Prune(&study, 0));
  EXPECT_EQ(study.trials[0].system_attrs.count("completed_rung_0"), 1u);
}

TEST(PrunerRegistryTest, HyperbandResolvesAgainstTheResourceAxis) {
  EXPECT_EQ(Settings("{type: hyperband}", 64)->Json(),
            "{\"type\": \"hyperband\", \"min_resource\": 64, \"max_resource\": \"auto\", "
            "\"reduction_factor\": 3, \"bootstrap_count\": 0}");
  EXPECT_EQ(Settings("{type: hyperband, min_iter: 2, max_iter: 18}", 64)->Json(),
            "{\"type\": \"hyperband\", \"min_resource\": 128, \"max_resource\": 1152, "
            "\"reduction_factor\": 3, \"bootstrap_count\": 0}");
  absl::StatusOr<ConfigFile> file = ConfigFile::Parse("{type: hyperband}", "t.yaml");
  std::vector<std::string> notes;
  PrunerSettingsPtr s = *ParseEarlyTerminate(*file->Root(), &notes);
  EXPECT_EQ(s->Resolve({0}, "t.yaml").status().message(),
            "t.yaml: early_terminate.min_resource: auto is one evaluation interval, but the "
            "training data cannot be read here to size it: give min_resource in samples");
  // Nothing to resolve: the same settings.
  PrunerSettingsPtr median = Settings("{type: median}");
  EXPECT_EQ(*median->Resolve({0}, "t.yaml"), median);
}

TEST(PrunerRegistryTest, NopNeverPrunes) {
  Study study;
  Trial t;
  t.intermediate_values[0] = std::numeric_limits<double>::quiet_NaN();
  study.trials.push_back(t);
  EXPECT_FALSE(NopPruner().Prune(&study, 0));
  EXPECT_TRUE(study.trials[0].system_attrs.empty());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
