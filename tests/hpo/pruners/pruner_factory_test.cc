#include "hpo/pruners/pruner_factory.h"

#include "gtest/gtest.h"
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
