// The phased sampler: random points first, wait for them to settle, then the grid; each point
// proposed once; failed points count as settled only after max_failures_per_trial retries.
#include "hpo/samplers/random_then_grid_sampler.h"

#include <cmath>

#include "gtest/gtest.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

SearchSettings Config() {
  SearchSettings c;
  c.method = "random_then_grid";
  c.lr = {"lr", "log_uniform", 1e-5, 1e-3, {}};
  c.batch_sizes = {16, 32, 64, 128};
  MutableRandomSpec(&c) = {3, 0};
  MutableGridSpec(&c) = {1, 9, 10.0, 0};
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
  // The climb waits for the grid's results; without the climb the plan ends here.
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kWait);
  EXPECT_FALSE(sampler.PlannedTrials().has_value());
  SearchSettings no_climb = Config();
  MutableGridSpec(&no_climb).climb = false;
  RandomThenGridSampler plain(no_climb);
  EXPECT_EQ(plain.NextAvailability(study), Availability::kExhausted);
  EXPECT_EQ(plain.PlannedTrials(), 3 + static_cast<int64_t>(grid_size));
}

// A bowl over the lattice, highest at (lr 1e-3, batch 128): a corner of the space.
double Bowl(const Params& p) {
  return -std::pow(std::log10(p.at(kLrParam)) + 3, 2) -
         std::pow(std::log2(p.at(kBatchParam) / 128), 2);
}

// Runs `sampler` to its end one trial at a time, each COMPLETE with Bowl.
Study RunToEnd(RandomThenGridSampler& sampler, const SearchSettings& c) {
  Study study = RunCompleting(sampler, BuildSearchSpace(c), Bowl);
  EXPECT_EQ(sampler.NextAvailability(study), Availability::kExhausted);
  return study;
}

// A resumed sweep: for each trial of `run` from `from` on, a fresh sampler given the trials
// before it proposes it again (its point and params).
void ExpectResumedAlike(const SearchSettings& c, const Study& run, size_t from) {
  for (size_t k = from; k < run.trials.size(); ++k) {
    RandomThenGridSampler resumed(c);
    Study before;
    before.trials.assign(run.trials.begin(), run.trials.begin() + static_cast<long>(k));
    ASSERT_EQ(resumed.NextAvailability(before), Availability::kReady) << k;
    Trial t;
    t.number = static_cast<int64_t>(k);
    SampleTrial(resumed, before, &t, BuildSearchSpace(c));
    EXPECT_EQ(t.point, run.trials[k].point) << k;
    EXPECT_EQ(t.params, run.trials[k].params) << k;
  }
}

// The local grid around the random phase's best misses the grid's best when that lies beyond
// its neighbourhood; the climb walks there, within the local grid's bound, and a resumed
// sweep climbs the same way.
TEST(RandomThenGridSamplerTest, ClimbsToTheGridsBestBeyondTheLocalGrid) {
  SearchSettings c = Config();
  MutableGridSpec(&c) = {1, 9, 10.0,
                         1};  // lrs a factor 10^(1/4) apart; the best's batch and one each side
  const Params best = {{kLrParam, 1e-3}, {kBatchParam, 128}};
  const auto found = [&](const Study& s) {
    for (const Trial& t : s.trials) {
      if (SamePoint(t.params, best)) return true;
    }
    return false;
  };
  SearchSettings no_climb = c;
  MutableGridSpec(&no_climb).climb = false;
  RandomThenGridSampler plain(no_climb);
  const Study without = RunToEnd(plain, no_climb);
  ASSERT_FALSE(found(without)) << "the local grid reaches the best: no test of the climb";

  RandomThenGridSampler sampler(c);
  const Study with = RunToEnd(sampler, c);
  EXPECT_TRUE(found(with));
  ASSERT_GT(with.trials.size(), without.trials.size());
  // The same random points and local grid first; then the climb's points, all grid points.
  for (size_t i = 0; i < without.trials.size(); ++i) {
    EXPECT_EQ(with.trials[i].params, without.trials[i].params) << i;
  }
  const std::vector<Params> full = FullGrid(c);
  for (size_t i = without.trials.size(); i < with.trials.size(); ++i) {
    EXPECT_EQ(with.trials[i].phase, "grid");
    bool on_grid = false;
    for (const Params& q : full) on_grid = on_grid || SamePoint(with.trials[i].params, q);
    EXPECT_TRUE(on_grid) << i;
    for (size_t j = 0; j < i; ++j)
      EXPECT_FALSE(SamePoint(with.trials[i].params, with.trials[j].params));
  }
  EXPECT_EQ(sampler.PlannedTrials(), static_cast<int64_t>(with.trials.size()));
  EXPECT_LE(static_cast<int64_t>(with.trials.size()), RandomThenGridKind().max_planned_trials(c));
  // A resumed sweep: a fresh sampler given the study before any climb trial proposes it again.
  ExpectResumedAlike(c, with, without.trials.size());
}

// The climb's rounds come one at a time: each waits until the points before it are settled.
TEST(RandomThenGridSamplerTest, EachClimbRoundWaitsForTheLast) {
  SearchSettings c = Config();
  MutableGridSpec(&c) = {1, 9, 10.0, 1};
  RandomThenGridSampler sampler(c);
  Study study;
  int64_t local_end = -1;
  while (true) {
    const Availability a = sampler.NextAvailability(study);
    if (a == Availability::kExhausted) break;
    if (a == Availability::kWait) {
      // Nothing may wait with nothing running; finish every running trial.
      bool running = false;
      for (Trial& t : study.trials) {
        if (t.state != TrialState::kRunning) continue;
        running = true;
        t.state = TrialState::kComplete;
        t.value = Bowl(t.params);
      }
      ASSERT_TRUE(running) << "waits on nothing";
      continue;
    }
    if (local_end < 0 && sampler.grid().has_value()) {
      local_end = 3 + static_cast<int64_t>(sampler.grid()->size());
    }
    NewTrial(sampler, study);
  }
  EXPECT_GT(static_cast<int64_t>(study.trials.size()), local_end);
}

// Runs `sampler` on `seats` seats in rounds, as a sweep would when the trials of one round end
// together: trials start while seats are free and the sampler is ready; then every running
// trial completes with Bowl. Each element: the points one round started.
std::vector<std::vector<Params>> RunInRounds(RandomThenGridSampler& sampler,
                                             const SearchSettings& c, int64_t seats, Study* study) {
  std::vector<std::vector<Params>> rounds(1);
  for (;;) {
    const Availability a = sampler.NextAvailability(*study);
    if (a == Availability::kExhausted) break;
    int64_t running = 0;
    for (const Trial& t : study->trials) running += t.state == TrialState::kRunning ? 1 : 0;
    if (a == Availability::kReady && running < seats) {
      Trial t;
      t.number = static_cast<int64_t>(study->trials.size());
      SampleTrial(sampler, *study, &t, BuildSearchSpace(c));
      study->trials.push_back(t);
      rounds.back().push_back(t.params);
      continue;
    }
    EXPECT_GT(running, 0) << "waits on nothing";
    if (running == 0) break;
    for (Trial& t : study->trials) {
      if (t.state != TrialState::kRunning) continue;
      t.state = TrialState::kComplete;
      t.value = Bowl(t.params);
    }
    rounds.emplace_back();
  }
  if (rounds.back().empty()) rounds.pop_back();
  return rounds;
}

const Trial& BestOf(const Study& s) {
  const Trial* best = &s.trials.front();
  for (const Trial& t : s.trials) {
    if (*t.value > *best->value) best = &t;
  }
  return *best;
}

// A climb round of fewer points than max_concurrent_trials fills the free seats with the round
// that would follow its points if they won: on 4 seats the climb reaches the same best in
// fewer rounds, each round's own points first, and a resumed sweep proposes the same points.
TEST(RandomThenGridSamplerTest, ClimbFillsFreeSeatsWithTheNextRound) {
  SearchSettings ahead_config = Config();
  MutableRandomSpec(&ahead_config) = {4, 0};
  MutableGridSpec(&ahead_config) = {1, 9, 10.0, 1};
  ahead_config.max_concurrent_trials = 4;
  SearchSettings plain_config = ahead_config;
  plain_config.max_concurrent_trials = 1;  // no look-ahead
  RandomThenGridSampler plain(plain_config), ahead(ahead_config);
  Study s_plain, s_ahead;
  const std::vector<std::vector<Params>> r_plain = RunInRounds(plain, plain_config, 4, &s_plain);
  const std::vector<std::vector<Params>> r_ahead = RunInRounds(ahead, ahead_config, 4, &s_ahead);
  const Params corner = {{kLrParam, 1e-3}, {kBatchParam, 128}};
  EXPECT_EQ(BestOf(s_plain).params, corner);
  EXPECT_EQ(BestOf(s_ahead).params, corner);
  EXPECT_LT(r_ahead.size(), r_plain.size());
  // The same rounds until the first climb round, which starts with the same points.
  size_t r = 0;
  while (r < r_plain.size() && r_plain[r] == r_ahead[r]) ++r;
  ASSERT_LT(r, r_plain.size()) << "no round was filled: no test";
  ASSERT_LT(r_plain[r].size(), r_ahead[r].size());
  for (size_t j = 0; j < r_plain[r].size(); ++j) EXPECT_EQ(r_ahead[r][j], r_plain[r][j]) << j;
  EXPECT_LE(s_ahead.trials.size(), s_plain.trials.size());
  for (size_t i = 0; i < s_ahead.trials.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NE(s_ahead.trials[i].params, s_ahead.trials[j].params);
  }
  EXPECT_LE(static_cast<int64_t>(s_ahead.trials.size()),
            RandomThenGridKind().max_planned_trials(ahead_config));
  // A resumed sweep, given the study before any of its trials, proposes it again.
  ExpectResumedAlike(ahead_config, s_ahead, 4);
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
