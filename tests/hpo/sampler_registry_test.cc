// The sampler registry (hpo/samplers/sampler_registry.h): its methods in order, look-ups, and
// each kind's contract: `make` builds a sampler whose run stays within max_planned_trials and
// whose PlannedTrials is the count it proposed; its first random_points trials are
// RandomSampler's points; `validate` refuses only what its method cannot run; `describe` says
// what the dry run shows; the sweep config accepts exactly the registered methods.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/yaml_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler_registry.h"
#include "hpo/search_space.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SearchSettings Settings(const std::string& method) {
  SearchSettings s;
  s.lr = {kLrParam, "log_uniform", 1e-5, 1e-3};
  s.batch_sizes = {16, 32, 64};
  s.method = method;
  s.random = {4, 7};
  s.grid = {2, 3, 10.0, 1};
  return s;
}

// Runs `sampler` one trial at a time to exhaustion, each trial COMPLETE with a value that
// prefers lrs near 1e-4; returns the study.
Study RunToEnd(Sampler& sampler, const SearchSpace& space) {
  Study study;
  for (int guard = 0; guard < 1000; ++guard) {
    const Availability a = sampler.NextAvailability(study);
    if (a != Availability::kReady) {
      EXPECT_EQ(a, Availability::kExhausted);
      break;
    }
    Trial t;
    t.number = static_cast<int64_t>(study.trials.size());
    SampleTrial(sampler, study, &t, space);
    t.state = TrialState::kComplete;
    t.value = -std::abs(std::log10(t.params.at(kLrParam)) + 4) + t.params.at(kBatchParam) / 1e3;
    study.trials.push_back(t);
    sampler.AfterTrial(study, study.trials.back());
  }
  return study;
}

TEST(SamplerRegistryTest, ListsTheMethodsInOrder) {
  EXPECT_THAT(SamplerMethods(), ElementsAre("random", "grid", "random_then_grid"));
  for (const std::string& method : SamplerMethods()) {
    ASSERT_NE(FindSamplerKind(method), nullptr) << method;
    EXPECT_EQ(FindSamplerKind(method)->method, method);
    EXPECT_EQ(&SamplerKindOf(Settings(method)), FindSamplerKind(method));
  }
  EXPECT_EQ(FindSamplerKind("bayes"), nullptr);
  EXPECT_EQ(FindSamplerKind(""), nullptr);
}

TEST(SamplerRegistryTest, EachKindBuildsASamplerThatKeepsItsPlan) {
  for (const std::string& method : SamplerMethods()) {
    SCOPED_TRACE(method);
    const SearchSettings s = Settings(method);
    const SamplerKind& kind = SamplerKindOf(s);
    std::unique_ptr<Sampler> sampler = MakeSampler(s);
    ASSERT_NE(sampler, nullptr);
    const SearchSpace space = BuildSearchSpace(s);
    const Study study = RunToEnd(*sampler, space);
    const int64_t proposed = static_cast<int64_t>(study.trials.size());
    EXPECT_GT(proposed, 0);
    EXPECT_LE(proposed, kind.max_planned_trials(s));
    ASSERT_TRUE(sampler->PlannedTrials().has_value());
    EXPECT_EQ(*sampler->PlannedTrials(), proposed);
    // The leading random points are RandomSampler's, as the dry run lists them.
    const int64_t random_points = kind.random_points(s);
    ASSERT_LE(random_points, proposed);
    RandomSampler random(static_cast<uint64_t>(s.random.seed), random_points);
    for (int64_t i = 0; i < random_points; ++i) {
      EXPECT_EQ(study.trials[i].params, random.PointFor(i, space)) << i;
      EXPECT_EQ(study.trials[i].phase, "random");
    }
    for (int64_t i = random_points; i < proposed; ++i) EXPECT_EQ(study.trials[i].phase, "grid");
  }
  EXPECT_EQ(SamplerKindOf(Settings("random")).random_points(Settings("random")), 4);
  EXPECT_EQ(SamplerKindOf(Settings("grid")).random_points(Settings("grid")), 0);
  EXPECT_EQ(SamplerKindOf(Settings("grid")).max_planned_trials(Settings("grid")), 3 * 3);
}

TEST(SamplerRegistryTest, ValidateRefusesOnlyWhatTheMethodCannotRun) {
  absl::StatusOr<ConfigFile> file =
      ConfigFile::Parse("search:\n  random: {trials: 2}\n  grid: {top_k: 3}\n", "s.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::StatusOr<ConfigMap> root = file->Root();
  ASSERT_TRUE(root.ok());
  absl::StatusOr<ConfigMap> search = root->GetMap("search");
  ASSERT_TRUE(search.ok());
  for (const std::string& method : SamplerMethods()) {
    SearchSettings s = Settings(method);
    s.random.trials = 2;
    s.grid.top_k = 3;
    const absl::Status status = SamplerKindOf(s).validate(*search, s);
    if (method == "random_then_grid") {
      EXPECT_THAT(status.message(), HasSubstr("s.yaml:3: search.grid.top_k: is 3 but the random "
                                              "phase runs only 2 trials"));
    } else {
      EXPECT_TRUE(status.ok()) << method << ": " << status;
    }
  }
}

TEST(SamplerRegistryTest, EachKindDescribesItself) {
  EXPECT_EQ(SamplerKindOf(Settings("random")).describe(Settings("random")),
            "    random      4 trials, seed 7\n");
  EXPECT_EQ(SamplerKindOf(Settings("grid")).describe(Settings("grid")),
            "    grid        3 lr points x 3 batch sizes\n");
  const std::string both =
      SamplerKindOf(Settings("random_then_grid")).describe(Settings("random_then_grid"));
  EXPECT_THAT(both, HasSubstr("    random      4 trials, seed 7\n"));
  EXPECT_THAT(both, HasSubstr("around each of the 2 best random trials"));
}

TEST(SamplerRegistryTest, TheSweepConfigTakesTheRegisteredMethods) {
  for (const std::string& method : SamplerMethods()) {
    const SweepConfig c = ConfigFromYaml(
        "name: s\nmetric: {name: m}\ntrainer: {synthetic: {}}\n"
        "parameters: {lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3},"
        " batch_size: {values: [16]}}\nsearch: {method: " +
            method + "}\n",
        "s.yaml");
    EXPECT_EQ(c.method, method);
  }
}

// search.grid.climb (hpo/samplers/random_then_grid_sampler.h): on unless turned off.
TEST(SamplerRegistryTest, TheSweepConfigTakesGridClimb) {
  const std::string head =
      "name: s\nmetric: {name: m}\ntrainer: {synthetic: {}}\n"
      "parameters: {lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3},"
      " batch_size: {values: [16]}}\n";
  EXPECT_TRUE(ConfigFromYaml(head + "search: {method: random_then_grid}\n", "s.yaml").grid.climb);
  EXPECT_FALSE(ConfigFromYaml(head + "search: {grid: {climb: false}}\n", "s.yaml").grid.climb);
  absl::StatusOr<ConfigFile> file =
      ConfigFile::Parse(head + "search: {grid: {climb: maybe}}\n", "s.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(ParseSweepConfig(*file).status().message(),
              HasSubstr("s.yaml:5: search.grid.climb: expected true or false, got 'maybe'"));
  SearchSettings s = Settings("random_then_grid");
  EXPECT_THAT(SamplerKindOf(s).describe(s), HasSubstr("then climbs from the best grid point"));
  s.grid.climb = false;
  EXPECT_THAT(SamplerKindOf(s).describe(s), ::testing::Not(HasSubstr("climbs")));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
