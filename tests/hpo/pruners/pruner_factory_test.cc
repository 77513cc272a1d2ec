#include "hpo/pruners/pruner_factory.h"

#include "gtest/gtest.h"
#include "hpo/pruners/hyperband_pruner.h"
#include "hpo/pruners/median_pruner.h"
#include "hpo/pruners/nop_pruner.h"
#include "hpo/pruners/successive_halving_pruner.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(PrunerFactoryTest, MapsEachName) {
  SweepConfig config;
  config.pruner = "none";
  EXPECT_NE(dynamic_cast<NopPruner*>(MakePruner(config).get()), nullptr);
  config.pruner = "median";
  EXPECT_NE(dynamic_cast<MedianPruner*>(MakePruner(config).get()), nullptr);
  config.pruner = "successive_halving";
  EXPECT_NE(dynamic_cast<SuccessiveHalvingPruner*>(MakePruner(config).get()), nullptr);
  config.pruner = "hyperband";
  config.hyperband.min_resource = 1;
  EXPECT_NE(dynamic_cast<HyperbandPruner*>(MakePruner(config).get()), nullptr);
  config.pruner = "asha";
  EXPECT_EQ(MakePruner(config), nullptr);
}

TEST(PrunerFactoryTest, PassesTheSpec) {
  SweepConfig config;
  config.pruner = "median";
  config.median.n_startup_trials = 2;
  Study study;
  study.maximize = false;
  for (double v : {1.0, 100.0}) {
    Trial t;
    t.number = static_cast<int64_t>(study.trials.size());
    t.state = study.trials.empty() ? TrialState::kComplete : TrialState::kRunning;
    t.intermediate_values[0] = v;
    study.trials.push_back(t);
  }
  EXPECT_FALSE(MakePruner(config)->Prune(&study, 1));  // 1 COMPLETE trial of 2 startup trials
  config.median.n_startup_trials = 1;
  EXPECT_TRUE(MakePruner(config)->Prune(&study, 1));
}

TEST(PrunerFactoryTest, PassesTheHyperbandSpec) {
  // Study "sweep": trial 0 is in bracket 2 of 5 (max_resource 81, factor 3), whose rung 0 ends
  // at step 9; with max_resource 3 (2 brackets) it is in bracket 0, whose rung 0 ends at step 1.
  SweepConfig config;
  config.pruner = "hyperband";
  config.hyperband = {/*min_resource=*/1, /*max_resource=*/81, /*reduction_factor=*/3,
                      /*bootstrap_count=*/0};
  Study study;
  study.name = "sweep";
  study.trials.emplace_back();
  study.trials[0].intermediate_values[1] = 0.5;
  EXPECT_FALSE(MakePruner(config)->Prune(&study, 0));
  EXPECT_TRUE(study.trials[0].system_attrs.empty());
  config.hyperband.max_resource = 3;
  EXPECT_FALSE(MakePruner(config)->Prune(&study, 0));
  EXPECT_EQ(study.trials[0].system_attrs.count("completed_rung_0"), 1u);
}

TEST(PrunerFactoryTest, NopNeverPrunes) {
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
