// What every sampler of hpo/samplers/ promises (hpo/samplers/sampler.h), checked the same way for
// each: RandomSampler (bounded and unlimited) and the registry's sampler for every registered
// method (hpo/samplers/all_samplers.h; a new entry is checked here with no edit), each on a few
// search spaces (a log-uniform lr, a uniform lr with an int and a string parameter, lists of
// values only, a one-point space).
//
// - A resumed sweep proposes the same points: the study as it was before trial k, its running
//   trials ended FAIL "interrupted" as SweepEngine::Resume ends them, given to a fresh sampler,
//   gives trial k's point (and, one trial at a time, every later point) again.
// - No point twice: grid points are distinct from every earlier proposal; random draws repeat
//   only where the space is finite (sampling with replacement, as Optuna's RandomSampler).
// - Availability: never kExhausted before the last point, never kReady after it, kExhausted
//   once it is told (at once where the count is known up front); every point lies in the space;
//   the planned count (as SweepDriver::Progress and MaxPlannedTrials give it) is the count
//   proposed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "hpo/samplers/sampler.h"
#include "hpo/samplers/sampler_kind.h"
#include "hpo/samplers/sampler_registry.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr int64_t kCap = 400;          // a finite sampler's run must end before this many
constexpr int64_t kUnlimitedRun = 24;  // proposals in an unlimited sampler's run

struct NamedSpace {
  std::string name;
  SweepConfig config;
};

std::vector<NamedSpace> Spaces() {
  std::vector<NamedSpace> out;
  SweepConfig c;
  c.lr = {kLrParam, "log_uniform", 1e-5, 1e-3};
  c.batch_sizes = {16, 32, 64, 128};
  MutableRandomSpec(&c) = {5, 3};
  MutableGridSpec(&c) = {2, 5, 10.0, 1};
  out.push_back({"log_uniform_lr", c});

  c.lr = {kLrParam, "uniform", 1e-4, 5e-4};
  c.batch_sizes = {32, 64};
  c.params = {{"train.epochs", "int", 1, 3},
              {"model.pooling", "categorical", 0, 0, {}, {"mean", "cls", "max"}}};
  MutableRandomSpec(&c) = {4, 1};
  MutableGridSpec(&c) = {1, 3, 4.0, 1};
  out.push_back({"int_and_strings", c});

  c.lr = {kLrParam, "categorical", 0, 0, {1e-5, 3e-5, 1e-4, 3e-4}};
  c.batch_sizes = {16, 32};
  c.params = {{"model.pooling", "categorical", 0, 0, {}, {"mean", "cls"}}};
  MutableRandomSpec(&c) = {6, 0};
  MutableGridSpec(&c) = {2, 3, 10.0, 1};
  out.push_back({"values_lists", c});

  c.lr = {kLrParam, "categorical", 0, 0, {1e-4}};
  c.batch_sizes = {32};
  c.params.clear();
  MutableRandomSpec(&c) = {3, 0};
  MutableGridSpec(&c) = {1, 2, 10.0, 1};
  out.push_back({"one_point", c});
  return out;
}

bool HasContinuousParam(const SearchSpace& space) {
  for (const auto& [name, d] : space) {
    if (d.kind == Distribution::Kind::kFloat) return true;
  }
  return false;
}

// A deterministic objective with few ties, so that the grid phase has a clear best.
double Objective(const Params& p) {
  double v = -std::pow(std::log10(p.at(kLrParam)) + 4.2, 2) + p.at(kBatchParam) / 1000;
  for (const auto& [name, x] : p) v += 1e-3 * x * static_cast<double>(name.size());
  return v;
}

// A sampler under test: `make` builds it for a sweep config; `planned` is the count it plans once
// exhausted, `max_planned` an upper bound known before the sweep (-1: unlimited), `up_front`
// whether that bound is the exact count, `unlimited` whether it never runs out.
struct Subject {
  std::string name;
  std::function<std::unique_ptr<Sampler>(const SweepConfig&)> make;
  std::function<int64_t(const Sampler&, const SweepConfig&)> planned;
  std::function<int64_t(const SweepConfig&)> max_planned;
  std::function<bool(const SweepConfig&)> up_front;
  bool unlimited = false;
};

SweepConfig WithMethod(SweepConfig c, const std::string& method) {
  c.method = method;
  return c;
}

// The registry's sampler for search.method `method` (hpo/samplers/sampler_registry.h), as
// SweepEngine builds it. Its plan is known up front when it is random points only, or when a
// fresh sampler knows its count before the first trial.
Subject RegistrySubject(const std::string& method) {
  Subject s;
  s.name = method;
  s.make = [method](const SweepConfig& c) { return MakeSampler(WithMethod(c, method)); };
  s.planned = [](const Sampler& sampler, const SweepConfig&) {
    return sampler.PlannedTrials().value_or(-1);
  };
  s.max_planned = [method](const SweepConfig& c) {
    return MaxPlannedTrials(WithMethod(c, method));
  };
  s.up_front = [method](const SweepConfig& base) {
    const SweepConfig c = WithMethod(base, method);
    const SamplerKind& kind = SamplerKindOf(c);
    if (kind.random_points(c) == kind.max_planned_trials(c)) return true;
    std::unique_ptr<Sampler> fresh = MakeSampler(c);
    fresh->NextAvailability(Study{});
    return fresh->PlannedTrials().has_value();
  };
  return s;
}

std::vector<Subject> Subjects() {
  Subject bounded;
  bounded.name = "RandomSampler";
  bounded.make = [](const SweepConfig& c) -> std::unique_ptr<Sampler> {
    return std::make_unique<RandomSampler>(static_cast<uint64_t>(RandomSpecOf(c).seed),
                                           RandomSpecOf(c).trials);
  };
  bounded.planned = [](const Sampler&, const SweepConfig& c) { return RandomSpecOf(c).trials; };
  bounded.max_planned = [](const SweepConfig& c) { return RandomSpecOf(c).trials; };
  bounded.up_front = [](const SweepConfig&) { return true; };
  Subject unlimited;
  unlimited.name = "UnlimitedRandomSampler";
  unlimited.make = [](const SweepConfig& c) -> std::unique_ptr<Sampler> {
    return std::make_unique<RandomSampler>(static_cast<uint64_t>(RandomSpecOf(c).seed), -1);
  };
  unlimited.planned = [](const Sampler&, const SweepConfig&) { return int64_t{-1}; };
  unlimited.max_planned = [](const SweepConfig&) { return int64_t{-1}; };
  unlimited.up_front = [](const SweepConfig&) { return true; };
  unlimited.unlimited = true;
  std::vector<Subject> out = {bounded, unlimited};
  for (const std::string& method : SamplerMethods()) out.push_back(RegistrySubject(method));
  return out;
}

// A NextAvailability answer, with the count of proposals made before it.
struct Answer {
  Availability availability;
  int64_t proposed;
};

struct SweepRun {
  Study study;                // every trial, finished at the end
  std::vector<Study> before;  // before[i]: the study when the run's i-th proposal was made
  std::vector<Answer> answers;
  bool stuck = false;  // kWait with nothing running
};

// Drives `sampler` from `study` as SweepEngine does: a trial starts whenever the sampler is
// ready and fewer than `concurrency` run (SampleTrial), else the oldest running trial ends
// COMPLETE with Objective() and AfterTrial is called. Stops when nothing runs and the sampler
// is not ready, or `cap` proposals are made and told.
SweepRun Drive(Sampler& sampler, const SearchSpace& space, int64_t concurrency, int64_t cap,
               Study study = {}) {
  SweepRun run;
  run.study = std::move(study);
  int64_t proposed = 0;
  while (true) {
    int64_t running = 0;
    Trial* oldest = nullptr;
    for (Trial& t : run.study.trials) {
      if (t.state != TrialState::kRunning) continue;
      if (oldest == nullptr) oldest = &t;
      ++running;
    }
    const Availability a = sampler.NextAvailability(run.study);
    run.answers.push_back({a, proposed});
    if (a == Availability::kReady && running < concurrency && proposed < cap) {
      run.before.push_back(run.study);
      Trial t;
      t.number = static_cast<int64_t>(run.study.trials.size());
      SampleTrial(sampler, run.study, &t, space);
      run.study.trials.push_back(t);
      ++proposed;
      continue;
    }
    if (oldest == nullptr) {
      run.stuck = a == Availability::kWait;
      return run;
    }
    oldest->state = TrialState::kComplete;
    oldest->value = Objective(oldest->params);
    sampler.AfterTrial(run.study, *oldest);
  }
}

// The study a resumed sweep starts from: its running trials ended as SweepEngine::Resume ends
// them.
Study Interrupted(Study study) {
  for (Trial& t : study.trials) {
    if (t.state != TrialState::kRunning) continue;
    t.state = TrialState::kFail;
    t.fail_reason = "interrupted";
  }
  return study;
}

std::string Describe(const Trial& t) {
  std::string out = "trial " + std::to_string(t.number) + " point " + std::to_string(t.point) +
                    " " + t.phase + " {";
  for (const auto& [name, v] : t.params) out += " " + name + "=" + std::to_string(v);
  return out + " }";
}

void ExpectSameProposal(const Trial& got, const Trial& want) {
  EXPECT_EQ(got.params, want.params) << Describe(got) << " vs " << Describe(want);
  EXPECT_EQ(got.point, want.point) << Describe(got);
  EXPECT_EQ(got.phase, want.phase) << Describe(got);
}

class SamplerConformanceTest : public ::testing::TestWithParam<Subject> {
 protected:
  int64_t Cap() const { return GetParam().unlimited ? kUnlimitedRun : kCap; }

  // Runs a sampler of this subject from scratch on each space, 1 and 3 trials at a time, and
  // calls check(config, space, concurrency, sampler, run) after each run.
  template <typename Check>
  void ForEachRun(Check check) {
    for (const NamedSpace& s : Spaces()) {
      const SearchSpace space = BuildSearchSpace(s.config);
      for (int64_t concurrency : {1, 3}) {
        SCOPED_TRACE(s.name + ", " + std::to_string(concurrency) + " at a time");
        std::unique_ptr<Sampler> sampler = GetParam().make(s.config);
        const SweepRun run = Drive(*sampler, space, concurrency, Cap());
        ASSERT_FALSE(run.stuck);
        check(s.config, space, concurrency, *sampler, run);
        if (::testing::Test::HasFailure()) return;  // one failing run is enough to read
      }
    }
  }
};

INSTANTIATE_TEST_SUITE_P(EverySampler, SamplerConformanceTest, ::testing::ValuesIn(Subjects()),
                         [](const ::testing::TestParamInfo<Subject>& info) {
                           return info.param.name;
                         });

TEST_P(SamplerConformanceTest, ResumedSweepProposesTheSamePoints) {
  this->ForEachRun([&](const SweepConfig& config, const SearchSpace& space, int64_t concurrency,
                       Sampler& sampler, const SweepRun& full) {
    const std::vector<Trial>& trials = full.study.trials;
    for (size_t k = 0; k < trials.size(); ++k) {
      SCOPED_TRACE("resumed before trial " + std::to_string(k));
      std::unique_ptr<Sampler> fresh = GetParam().make(config);
      const Study resumed = Interrupted(full.before[k]);
      if (concurrency > 1) {
        // Interrupted trials are the engine's to retry; the sampler's next point must match.
        ASSERT_EQ(fresh->NextAvailability(resumed), Availability::kReady);
        Trial t;
        t.number = static_cast<int64_t>(k);
        SampleTrial(*fresh, resumed, &t, space);
        ExpectSameProposal(t, trials[k]);
        continue;
      }
      const SweepRun rest = Drive(*fresh, space, 1, this->Cap() - static_cast<int64_t>(k), resumed);
      ASSERT_FALSE(rest.stuck);
      const std::vector<Trial>& again = rest.study.trials;
      for (size_t i = k; i < std::min(again.size(), trials.size()); ++i) {
        ExpectSameProposal(again[i], trials[i]);
      }
      EXPECT_EQ(again.size(), trials.size()) << "trials in the resumed sweep";
      if (::testing::Test::HasFailure()) return;  // one resume point is enough to read
    }
    // Resumed after the last trial: nothing more (or, unlimited, the next point).
    std::unique_ptr<Sampler> fresh = GetParam().make(config);
    EXPECT_EQ(fresh->NextAvailability(full.study), sampler.NextAvailability(full.study));
  });
}

TEST_P(SamplerConformanceTest, NoPointIsProposedTwice) {
  this->ForEachRun(
      [&](const SweepConfig&, const SearchSpace& space, int64_t, Sampler&, const SweepRun& run) {
        const bool continuous = HasContinuousParam(space);
        const std::vector<Trial>& trials = run.study.trials;
        for (size_t j = 0; j < trials.size(); ++j) {
          const bool drawn = trials[j].phase != "grid";  // RandomSampler's trials have no phase
          for (size_t i = 0; i < j; ++i) {
            const bool both_drawn = drawn && trials[i].phase != "grid";
            if (both_drawn && !continuous) continue;  // a finite space: draws may repeat
            if (both_drawn) {
              EXPECT_NE(trials[i].params, trials[j].params) << Describe(trials[j]);
            } else {
              EXPECT_FALSE(SamePoint(trials[i].params, trials[j].params))
                  << Describe(trials[j]) << " repeats " << Describe(trials[i]);
            }
          }
        }
      });
}

TEST_P(SamplerConformanceTest, AvailabilityFollowsThePlan) {
  this->ForEachRun([&](const SweepConfig& config, const SearchSpace& space, int64_t,
                       Sampler& sampler, const SweepRun& run) {
    const int64_t n = static_cast<int64_t>(run.study.trials.size());
    for (const Trial& t : run.study.trials) {
      ASSERT_EQ(t.params.size(), space.size()) << Describe(t);
      for (const auto& [name, d] : space) {
        ASSERT_EQ(t.params.count(name), 1u) << name;
        EXPECT_TRUE(d.Contains(t.params.at(name))) << Describe(t) << ": " << d.Describe();
      }
    }
    if (GetParam().unlimited) {  // ready whenever asked
      EXPECT_EQ(n, this->Cap());
      for (const Answer& a : run.answers) EXPECT_EQ(a.availability, Availability::kReady);
      return;
    }
    ASSERT_LT(n, this->Cap());
    EXPECT_GE(n, 1);
    const int64_t max_planned = GetParam().max_planned(config);
    const bool up_front = GetParam().up_front(config);
    EXPECT_LE(n, max_planned);
    if (up_front) {
      EXPECT_EQ(n, max_planned);
    }
    EXPECT_EQ(GetParam().planned(sampler, config), n);
    bool exhausted = false, first_after_last = true;
    for (const Answer& a : run.answers) {
      if (a.proposed < n) {
        EXPECT_NE(a.availability, Availability::kExhausted)
            << "after " << a.proposed << " of " << n;
        continue;
      }
      EXPECT_NE(a.availability, Availability::kReady) << "after the last point";
      if (up_front && first_after_last) {
        EXPECT_EQ(a.availability, Availability::kExhausted) << "right after the last point";
      }
      first_after_last = false;
      if (exhausted) {
        EXPECT_EQ(a.availability, Availability::kExhausted) << "exhaustion undone";
      }
      exhausted = exhausted || a.availability == Availability::kExhausted;
    }
    EXPECT_EQ(run.answers.back().availability, Availability::kExhausted);
    EXPECT_EQ(sampler.NextAvailability(run.study), Availability::kExhausted);  // and stays so
  });
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
