#include "hpo/samplers/random_sampler.h"

#include <cmath>
#include <set>

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

SearchSpace Space() {
  SearchSettings c;
  c.lr = {"lr", "log_uniform", 1e-5, 1e-3, {}};
  c.batch_sizes = {16, 32, 64, 128};
  return BuildSearchSpace(c);
}

TEST(RandomSamplerTest, PointsStayInRangeAndCoverIt) {
  RandomSampler sampler(7, -1);
  const SearchSpace space = Space();
  std::set<double> batches;
  int low_decade = 0;
  for (int i = 0; i < 2000; ++i) {
    Params p = sampler.PointFor(i, space);
    ASSERT_GE(p[kLrParam], 1e-5);
    ASSERT_LE(p[kLrParam], 1e-3);
    if (p[kLrParam] < 1e-4) ++low_decade;
    batches.insert(p[kBatchParam]);
  }
  EXPECT_EQ(batches, (std::set<double>{16, 32, 64, 128}));
  // Log-uniform: each decade gets about half the points (uniform would give ~9%).
  EXPECT_NEAR(low_decade / 2000.0, 0.5, 0.05);
}

TEST(RandomSamplerTest, DeterministicPerSeedAndTrial) {
  const SearchSpace space = Space();
  RandomSampler a(0, 8), b(0, 8), c(1, 8);
  EXPECT_EQ(a.PointFor(3, space), b.PointFor(3, space));
  EXPECT_NE(a.PointFor(3, space), a.PointFor(4, space));
  EXPECT_NE(a.PointFor(3, space), c.PointFor(3, space));
}

// Availability up to max_trials: tests/hpo/sampler_conformance_test.cc.
TEST(RandomSamplerTest, SampleTrialDrawsPointFor) {
  RandomSampler sampler(0, 2);
  const SearchSpace space = Space();
  Study study;
  for (int i = 0; i < 2; ++i) {
    Trial t;
    t.number = i;
    SampleTrial(sampler, study, &t, space);
    EXPECT_EQ(t.params, sampler.PointFor(i, space));
    study.trials.push_back(t);
  }
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
