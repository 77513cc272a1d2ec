// random_then_local's finer lrs (hpo/samplers/random_then_local_sampler.h): a line search in lr
// by halving steps around the incumbent, from an eighth of a grid step to kMaxFinerLrLevels,
// never step by step along a finer lattice; and a whole sweep that ends on an lr between the
// eighths.
#include "hpo/samplers/random_then_local_sampler.h"

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/search_space.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// lr over [1e-5, 1e-3] on 3 grid lrs (1e-5, 1e-4, 1e-3: a grid step is a factor 10), two batch
// sizes and a uniform dropout.
SearchSettings Settings() {
  SearchSettings s;
  s.method = "random_then_local";
  s.lr = {kLrParam, "log_uniform", 1e-5, 1e-3};
  s.batch_sizes = {16, 32};
  MutableRandomSpec(&s) = {4, 3};
  MutableGridSpec(&s) = {2, 3, 10.0, 1};
  ParamSpec dropout;
  dropout.name = "model.dropout";
  dropout.distribution = "uniform";
  dropout.min = 0.0;
  dropout.max = 0.2;
  s.params = {dropout};
  return s;
}

// 1e-4 times `fraction` of a grid step (a factor 10).
double Lr(double fraction) { return 1e-4 * std::pow(10.0, fraction); }

void AddComplete(Study* study, double lr, double value) {
  Trial t;
  t.number = static_cast<int64_t>(study->trials.size());
  t.state = TrialState::kComplete;
  t.params = {{kLrParam, lr}, {kBatchParam, 16}, {"model.dropout", 0.1}};
  t.value = value;
  study->trials.push_back(t);
}

std::vector<double> FinerLrs(const Study& study) {
  std::vector<double> out;
  for (const Params& p :
       LocalClimbStep(Settings(), study, {}, kFirstLocalSteps, LocalRound::kFinerLr)) {
    EXPECT_EQ(p.at(kBatchParam), 16);  // only lr moves
    EXPECT_EQ(p.at("model.dropout"), 0.1);
    out.push_back(p.at(kLrParam));
  }
  return out;
}

constexpr double kTol = 1e-12;

TEST(RandomThenLocalSamplerTest, FinerLrsHalveAroundAGridLr) {
  Study study;
  AddComplete(&study, 1e-4, 1.0);  // the incumbent, on the full grid
  EXPECT_THAT(FinerLrs(study),
              ElementsAre(DoubleNear(Lr(-1.0 / 8), kTol), DoubleNear(Lr(1.0 / 8), kTol)));
  // Both eighths worse: a sixteenth either side, then a thirty-second, to a 64th.
  AddComplete(&study, Lr(-1.0 / 8), 0.5);
  AddComplete(&study, Lr(1.0 / 8), 0.5);
  EXPECT_THAT(FinerLrs(study),
              ElementsAre(DoubleNear(Lr(-1.0 / 16), kTol), DoubleNear(Lr(1.0 / 16), kTol)));
  AddComplete(&study, Lr(1.0 / 16), 0.5);  // one of them run: the other one, same level
  EXPECT_THAT(FinerLrs(study), ElementsAre(DoubleNear(Lr(-1.0 / 16), kTol)));
  AddComplete(&study, Lr(-1.0 / 16), 0.5);
  for (int64_t level = 5; level <= kMaxFinerLrLevels; ++level) {
    const double step = std::ldexp(1.0, static_cast<int>(-level));
    EXPECT_THAT(FinerLrs(study),
                ElementsAre(DoubleNear(Lr(-step), kTol), DoubleNear(Lr(step), kTol)));
    AddComplete(&study, Lr(-step), 0.5);
    AddComplete(&study, Lr(step), 0.5);
  }
  EXPECT_THAT(FinerLrs(study), IsEmpty());  // the finest level is run: nothing finer
}

TEST(RandomThenLocalSamplerTest, FinerLrsHalveAroundAFinerLrNotAlongIt) {
  Study study;
  AddComplete(&study, 1e-4, 1.0);
  AddComplete(&study, Lr(1.0 / 8), 2.0);  // an eighth won: the incumbent is on level 3
  // A sixteenth either side of it, not the next eighth (Lr(2/8)).
  EXPECT_THAT(FinerLrs(study),
              ElementsAre(DoubleNear(Lr(1.0 / 16), kTol), DoubleNear(Lr(3.0 / 16), kTol)));
  AddComplete(&study, Lr(3.0 / 16), 3.0);  // a sixteenth won: a 32nd either side of it
  EXPECT_THAT(FinerLrs(study),
              ElementsAre(DoubleNear(Lr(5.0 / 32), kTol), DoubleNear(Lr(7.0 / 32), kTol)));
  AddComplete(&study, Lr(1.0 / 64), 4.0);  // a 64th (the finest level) won: nothing finer
  EXPECT_THAT(FinerLrs(study), IsEmpty());
}

TEST(RandomThenLocalSamplerTest, TheIncumbentMayBeOnTheFinestLattice) {
  Study study;
  AddComplete(&study, 1e-4, 1.0);
  AddComplete(&study, Lr(3.0 / 64), 2.0);   // the best, on the finest lattice
  AddComplete(&study, Lr(3.0 / 128), 9.0);  // better but on none: never the incumbent
  const std::vector<Params> round =
      LocalClimbStep(Settings(), study, {}, kFirstLocalSteps, LocalRound::kCoordinates);
  ASSERT_FALSE(round.empty());
  // The round is around Lr(3/64): its dropout neighbours (last) keep that lr.
  EXPECT_NE(round.back().at("model.dropout"), 0.1);
  EXPECT_NEAR(round.back().at(kLrParam), Lr(3.0 / 64), kTol);
}

// A whole sweep, every trial COMPLETE, on a peak between the full grid's lrs (at 3/16 of a grid
// step above 1e-4: an eighth gets within a sixteenth of it, and only halving reaches it), batch
// 16, dropout 0.1.
double Peak(const Params& p) {
  return -std::abs(std::log10(p.at(kLrParam) / Lr(3.0 / 16))) -
         std::abs(std::log2(p.at(kBatchParam) / 16)) - std::abs(p.at("model.dropout") - 0.1);
}

Study RunSweep(const SearchSettings& s, int64_t first_trials, Study study = {}) {
  RandomThenLocalSampler sampler(s);
  return RunCompleting(sampler, BuildSearchSpace(s), Peak, std::move(study), first_trials);
}

// Settings() with room for the climb: the local grids around 4 random trials hold every grid lr.
SearchSettings SweepSettings() {
  SearchSettings s = Settings();
  MutableRandomSpec(&s) = {6, 3};
  MutableGridSpec(&s).top_k = 4;
  MutableGridSpec(&s).lr_span = 100;
  return s;
}

TEST(RandomThenLocalSamplerTest, ASweepHalvesItsWayToAnLrBetweenTheEighths) {
  const Study study = RunSweep(SweepSettings(), -1);
  const Trial* best = &study.trials[0];
  for (const Trial& t : study.trials) {
    if (*t.value > *best->value) best = &t;
  }
  EXPECT_NEAR(best->params.at(kLrParam), Lr(3.0 / 16), kTol);
  EXPECT_EQ(best->params.at(kBatchParam), 16);
  EXPECT_NEAR(best->params.at("model.dropout"), 0.1, kTol);
  // A resumed sweep (a new sampler, nothing but the study) proposes the same points.
  for (const int64_t cut : {int64_t{5}, static_cast<int64_t>(study.trials.size()) - 3}) {
    SCOPED_TRACE(cut);
    Study resumed = RunSweep(SweepSettings(), cut);
    resumed = RunSweep(SweepSettings(), -1, resumed);
    ASSERT_EQ(resumed.trials.size(), study.trials.size());
    for (size_t i = 0; i < study.trials.size(); ++i) {
      EXPECT_EQ(resumed.trials[i].params, study.trials[i].params) << i;
    }
  }
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
