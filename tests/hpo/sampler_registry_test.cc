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
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler_registry.h"
#include "hpo/samplers/tpe_sampler.h"
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
  MutableRandomSpec(&s) = {4, 7};
  MutableGridSpec(&s) = {2, 3, 10.0, 1};
  return s;
}

// Runs `sampler` one trial at a time to exhaustion, each trial COMPLETE with a value that
// prefers lrs near 1e-4; returns the study.
Study RunToEnd(Sampler& sampler, const SearchSpace& space) {
  return RunCompleting(sampler, space, [](const Params& p) {
    return -std::abs(std::log10(p.at(kLrParam)) + 4) + p.at(kBatchParam) / 1e3;
  });
}

TEST(SamplerRegistryTest, ListsTheMethodsInOrder) {
  EXPECT_THAT(SamplerMethods(),
              ElementsAre("random", "grid", "random_then_grid", "random_then_local", "tpe"));
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
    RandomSampler random(static_cast<uint64_t>(RandomSpecOf(s).seed), random_points);
    for (int64_t i = 0; i < random_points; ++i) {
      EXPECT_EQ(study.trials[i].params, random.PointFor(i, space)) << i;
      EXPECT_EQ(study.trials[i].phase, "random");
    }
    for (int64_t i = random_points; i < proposed; ++i) {
      EXPECT_EQ(study.trials[i].phase, method == "tpe" ? "tpe" : "grid");
    }
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
    MutableRandomSpec(&s).trials = 2;
    MutableGridSpec(&s).top_k = 3;
    const absl::Status status = SamplerKindOf(s).validate(*search, s);
    if (method == "random_then_grid" || method == "random_then_local") {
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

// Each section of `search` (search.random, search.grid, search.tpe) is its module's to parse:
// the sweep config takes it, under any method, and refuses a mistake in it.
TEST(SamplerRegistryTest, KindsParseTheirOwnSections) {
  EXPECT_EQ(SamplerSections(), (std::vector<std::string>{"random", "grid", "tpe"}));
  const std::string head =
      "name: s\nmetric: {name: m}\ntrainer: {synthetic: {}}\n"
      "parameters: {lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3},"
      " batch_size: {values: [16]}}\n";
  const SweepConfig c = ConfigFromYaml(
      head + "search: {method: random_then_grid, tpe: {trials: 7, multivariate: true}}\n",
      "s.yaml");
  EXPECT_EQ(TpeSpecOf(c).trials, 7);
  EXPECT_TRUE(TpeSpecOf(c).multivariate);
  ConfigFile file =
      *ConfigFile::Parse(head + "search: {method: random, tpe: {trials: 0}}\n", "s.yaml");
  absl::StatusOr<SweepConfig> bad = ParseSweepConfig(file);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("search.tpe.trials"));
}

// search.grid.climb (hpo/samplers/random_then_grid_sampler.h): on unless turned off.
TEST(SamplerRegistryTest, TheSweepConfigTakesGridClimb) {
  const std::string head =
      "name: s\nmetric: {name: m}\ntrainer: {synthetic: {}}\n"
      "parameters: {lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3},"
      " batch_size: {values: [16]}}\n";
  EXPECT_TRUE(
      GridSpecOf(ConfigFromYaml(head + "search: {method: random_then_grid}\n", "s.yaml")).climb);
  EXPECT_FALSE(
      GridSpecOf(ConfigFromYaml(head + "search: {grid: {climb: false}}\n", "s.yaml")).climb);
  absl::StatusOr<ConfigFile> file =
      ConfigFile::Parse(head + "search: {grid: {climb: maybe}}\n", "s.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(ParseSweepConfig(*file).status().message(),
              HasSubstr("s.yaml:5: search.grid.climb: expected true or false, got 'maybe'"));
  SearchSettings s = Settings("random_then_grid");
  EXPECT_THAT(SamplerKindOf(s).describe(s), HasSubstr("then climbs from the best grid point"));
  MutableGridSpec(&s).climb = false;
  EXPECT_THAT(SamplerKindOf(s).describe(s), ::testing::Not(HasSubstr("climbs")));
}

// random_then_local (hpo/samplers/random_then_local_sampler.h) in a space with a uniform
// dropout and a listed warmup: a bowl highest at lr 1e-4, batch 32, dropout 0.1, warmup 0.1.
SearchSettings LocalSettings() {
  SearchSettings s = Settings("random_then_local");
  MutableGridSpec(&s).lr_points = 5;  // 1e-5, 3.2e-5, 1e-4, ...
  ParamSpec dropout;
  dropout.name = "model.dropout";
  dropout.distribution = "uniform";
  dropout.min = 0.0;
  dropout.max = 0.2;
  ParamSpec warmup;
  warmup.name = "train.warmup_ratio";
  warmup.distribution = "categorical";
  warmup.values = {0.0, 0.1, 0.2};
  s.params = {dropout, warmup};
  return s;
}

double LocalBowl(const Params& p) {
  return -std::pow(std::log10(p.at(kLrParam)) + 4, 2) -
         std::pow(std::log2(p.at(kBatchParam) / 32), 2) -
         10 * std::abs(p.at("model.dropout") - 0.1) -
         10 * std::abs(p.at("train.warmup_ratio") - 0.1);
}

// Runs `sampler` `max_trials` trials at most, each COMPLETE with LocalBowl's value.
void RunLocal(Sampler& sampler, Study* study, int64_t max_trials) {
  const SearchSpace space = BuildSearchSpace(LocalSettings());
  while (static_cast<int64_t>(study->trials.size()) < max_trials &&
         sampler.NextAvailability(*study) == Availability::kReady) {
    Trial t;
    t.number = static_cast<int64_t>(study->trials.size());
    SampleTrial(sampler, *study, &t, space);
    t.state = TrialState::kComplete;
    t.value = LocalBowl(t.params);
    study->trials.push_back(t);
  }
}

TEST(SamplerRegistryTest, RandomThenLocalClimbsInEveryParameter) {
  const SearchSettings s = LocalSettings();
  std::unique_ptr<Sampler> sampler = MakeSampler(s);
  Study study;
  RunLocal(*sampler, &study, 1000);
  EXPECT_EQ(sampler->NextAvailability(study), Availability::kExhausted);
  const int64_t n = static_cast<int64_t>(study.trials.size());
  EXPECT_LE(n, SamplerKindOf(s).max_planned_trials(s));
  ASSERT_TRUE(sampler->PlannedTrials().has_value());
  EXPECT_EQ(*sampler->PlannedTrials(), n);
  // The climb ends at the bowl's bottom: every parameter moved off its random value.
  const Trial* best = &study.trials[0];
  for (const Trial& t : study.trials) {
    if (*t.value > *best->value) best = &t;
  }
  EXPECT_NEAR(best->params.at(kLrParam), 1e-4, 1e-12);
  EXPECT_EQ(best->params.at(kBatchParam), 32);
  EXPECT_NEAR(best->params.at("model.dropout"), 0.1, 1e-12);
  EXPECT_NEAR(best->params.at("train.warmup_ratio"), 0.1, 1e-12);
  EXPECT_GE(best->number, RandomSpecOf(s).trials);
  // It proposed a neighbour in a non-lr parameter around a better point: the same lr and batch
  // as a trial before it, another dropout on the range's implied grid.
  bool moved_dropout = false;
  for (int64_t i = RandomSpecOf(s).trials; i < n && !moved_dropout; ++i) {
    const Params& p = study.trials[i].params;
    for (int64_t j = 0; j < i; ++j) {
      const Params& q = study.trials[j].params;
      if (p.at(kLrParam) == q.at(kLrParam) && p.at(kBatchParam) == q.at(kBatchParam) &&
          p.at("train.warmup_ratio") == q.at("train.warmup_ratio") &&
          p.at("model.dropout") != q.at("model.dropout")) {
        moved_dropout = true;
      }
    }
  }
  EXPECT_TRUE(moved_dropout);
  // Around the grid lr it settled on, it tried lrs an eighth of a grid step away.
  const double eighth = std::pow(10.0, 0.5 / 8);  // the 5 grid lrs are a factor 10^0.5 apart
  int64_t finer = 0;
  for (int64_t i = RandomSpecOf(s).trials; i < n; ++i) {
    const double lr = study.trials[i].params.at(kLrParam);
    if (std::abs(lr / 1e-4 - eighth) < 1e-9 || std::abs(lr * eighth / 1e-4 - 1) < 1e-9) ++finer;
  }
  EXPECT_EQ(finer, 2);
  // random_then_grid keeps the random trials' dropout and warmup: it cannot get there.
  SearchSettings grid = s;
  grid.method = "random_then_grid";
  std::unique_ptr<Sampler> plain = MakeSampler(grid);
  Study grid_study;
  RunLocal(*plain, &grid_study, 1000);
  double grid_best = -1e9;
  for (const Trial& t : grid_study.trials) grid_best = std::max(grid_best, *t.value);
  EXPECT_LT(grid_best, *best->value);
}

TEST(SamplerRegistryTest, RandomThenLocalResumesWithTheSamePoints) {
  const SearchSettings s = LocalSettings();
  std::unique_ptr<Sampler> whole = MakeSampler(s);
  Study all;
  RunLocal(*whole, &all, 1000);
  ASSERT_GT(all.trials.size(), 20u);
  const int64_t n = static_cast<int64_t>(all.trials.size());
  for (const int64_t cut : {int64_t{4}, int64_t{11}, int64_t{17}, n - 1}) {
    SCOPED_TRACE(cut);
    Study resumed;
    resumed.trials.assign(all.trials.begin(), all.trials.begin() + cut);
    std::unique_ptr<Sampler> again = MakeSampler(s);  // a new process: nothing but the study
    RunLocal(*again, &resumed, 1000);
    ASSERT_EQ(resumed.trials.size(), all.trials.size());
    for (size_t i = 0; i < all.trials.size(); ++i) {
      EXPECT_EQ(resumed.trials[i].params, all.trials[i].params) << i;
      EXPECT_EQ(resumed.trials[i].point, all.trials[i].point) << i;
    }
  }
}

// Without other parameters random_then_local is random_then_grid, point for point.
TEST(SamplerRegistryTest, RandomThenLocalOfLrAndBatchIsRandomThenGrid) {
  SearchSettings two = Settings("random_then_local");
  std::unique_ptr<Sampler> local = MakeSampler(two);
  two.method = "random_then_grid";
  std::unique_ptr<Sampler> grid = MakeSampler(two);
  const Study a = RunToEnd(*local, BuildSearchSpace(two));
  const Study b = RunToEnd(*grid, BuildSearchSpace(two));
  ASSERT_EQ(a.trials.size(), b.trials.size());
  for (size_t i = 0; i < a.trials.size(); ++i) EXPECT_EQ(a.trials[i].params, b.trials[i].params);
  EXPECT_THAT(SamplerKindOf(Settings("random_then_local")).describe(Settings("random_then_local")),
              HasSubstr("climbs from the best point to its unrun neighbours in every parameter"));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
