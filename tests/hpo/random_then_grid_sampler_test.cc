// The phased sampler: random points first, wait for them to settle, then the grid; each point
// proposed once; failed points count as settled only after max_failures_per_trial retries.
#include "hpo/samplers/random_then_grid_sampler.h"

#include "gtest/gtest.h"
#include "hpo/samplers/grid_sampler.h"

namespace tunefleet {
namespace hpo {
namespace {

SearchSettings Config() {
  SearchSettings c;
  c.method = "random_then_grid";
  c.lr = {"lr", "log_uniform", 1e-5, 1e-3, {}};
  c.batch_sizes = {16, 32, 64, 128};
  c.random = {3, 0};
  c.grid = {1, 9, 10.0, 0};
  c.max_failures_per_trial = 1;
  return c;
}

Trial& NewTrial(RandomThenGridSampler& sampler, Study& study) {
  Trial t;
  t.number = static_cast<int64_t>(study.trials.size());
  t.state = TrialState::kRunning;
  SampleTrial(sampler, study, &t, BuildSearchSpace(Config()));
  study.trials.push_back(t);
  return study.trials.back();
}

TEST(RandomThenGridSamplerTest, PhasesInOrder) {
  RandomThenGridSampler sampler(Config());
  Study study;
  RandomSampler random(0, -1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(sampler.NextAvailability(study), Availability::kReady);
    Trial& t = NewTrial(sampler, study);
    EXPECT_EQ(t.point, i);
    EXPECT_EQ(t.phase, "random");
    EXPECT_EQ(t.params, random.PointFor(i, BuildSearchSpace(Config())));
  }
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kWait);  // all running
  study.trials[0].state = TrialState::kComplete;
  study.trials[0].value = 0.3;
  study.trials[1].state = TrialState::kPruned;
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kWait);
  study.trials[2].state = TrialState::kComplete;
  study.trials[2].value = 0.8;
  ASSERT_EQ(sampler.NextAvailability(study), Availability::kReady);
  ASSERT_TRUE(sampler.grid().has_value());
  const size_t grid_size = sampler.grid()->size();
  // The full grid's lrs around trial 2 (whose random lr is none of them), at its batch.
  EXPECT_EQ(grid_size, LocalLrs(Config(), study.trials[2].params.at(kLrParam)).size());
  EXPECT_GE(grid_size, 3u);
  for (size_t i = 0; i < grid_size; ++i) {
    Trial& t = NewTrial(sampler, study);
    EXPECT_EQ(t.phase, "grid");
    EXPECT_EQ(t.point, 3 + static_cast<int64_t>(i));
    EXPECT_EQ(t.params.at(kBatchParam), study.trials[2].params.at(kBatchParam));
    for (size_t j = 0; j + 1 < study.trials.size(); ++j) {
      EXPECT_FALSE(SamePoint(t.params, study.trials[j].params)) << "duplicate of trial " << j;
    }
  }
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kExhausted);
}

TEST(RandomThenGridSamplerTest, FailedPointSettlesAfterRetries) {
  RandomThenGridSampler sampler(Config());
  Study study;
  for (int i = 0; i < 3; ++i) NewTrial(sampler, study);
  for (Trial& t : study.trials) {
    t.state = TrialState::kComplete;
    t.value = 0.1 * static_cast<double>(t.number);
  }
  study.trials[1].state = TrialState::kFail;
  study.trials[1].value.reset();
  EXPECT_FALSE(sampler.Settled(study, 1));
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kWait);
  Trial retry = study.trials[1];  // the driver's retry: same point, new number
  retry.number = 3;
  study.trials.push_back(retry);  // fails again: 2 failures > max 1
  EXPECT_TRUE(sampler.Settled(study, 1));
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kReady);
}

TEST(RandomThenGridSamplerTest, InterruptedTrialsDoNotCountAsFailures) {
  RandomThenGridSampler sampler(Config());
  Study study;
  NewTrial(sampler, study);
  study.trials[0].state = TrialState::kFail;
  study.trials[0].fail_reason = "interrupted";
  Trial again = study.trials[0];
  again.number = 1;
  study.trials.push_back(again);
  EXPECT_FALSE(sampler.Settled(study, 0));
}

TEST(RandomThenGridSamplerTest, TrialsLostWithTheirNodeAreRetriedButNotForever) {
  SearchSettings c = Config();
  c.max_failures_per_trial = 0;  // one real failure settles a point
  RandomThenGridSampler sampler(c);
  Study study;
  NewTrial(sampler, study);
  study.trials[0].state = TrialState::kFail;
  study.trials[0].fail_reason = "agent local lost (no heartbeat for 1.5s)";
  EXPECT_FALSE(CountsAsFailedAttempt(study.trials[0]));
  EXPECT_TRUE(LostWithItsNode(study.trials[0]));
  EXPECT_FALSE(sampler.Settled(study, 0));  // retried although no failure is allowed
  for (int64_t n = 1; n < kMaxNodeLosses; ++n) {
    Trial again = study.trials[0];
    again.number = n;
    study.trials.push_back(again);
    EXPECT_FALSE(sampler.Settled(study, 0)) << n;
  }
  Trial last = study.trials[0];
  last.number = kMaxNodeLosses;
  study.trials.push_back(last);
  EXPECT_TRUE(sampler.Settled(study, 0));  // a node that keeps dying: given up
  // A real failure still counts.
  Study other;
  NewTrial(sampler, other);
  other.trials[0].state = TrialState::kFail;
  other.trials[0].fail_reason = "exit code 1";
  EXPECT_TRUE(sampler.Settled(other, 0));
}

// Exhaustion after the last point, for every method: tests/hpo/sampler_conformance_test.cc.
TEST(RandomThenGridSamplerTest, GridOnlyRunsTheFullGrid) {
  SearchSettings grid_only = Config();
  grid_only.method = "grid";
  RandomThenGridSampler g(grid_only);
  Study s2;
  int n = 0;
  while (g.NextAvailability(s2) == Availability::kReady) {
    Trial& t = NewTrial(g, s2);
    EXPECT_EQ(t.phase, "grid");
    ++n;
  }
  EXPECT_EQ(n, 9 * 4);  // lr_points x batch sizes
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
