// The sweep engine without transport: the samples axis in the journal, the final report (an
// intermediate value the pruner sees, a decision that does not apply), retries, the study
// user attrs, and the bound warning recorded at the end.
#include "hpo/sweep_engine.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/journal_writer.h"
#include "hpo/report/report.h"
#include "tests/hpo/hpo_test_util.h"

namespace tunefleet {
namespace hpo {
namespace {

SweepConfig Config(const std::string& extra) {
  return ConfigFromYaml(
      "name: engine\n"
      "metric: {name: m, goal: maximize}\n"
      "trainer: {synthetic: {steps: 4, samples_per_step: 100}}\n"
      "parameters:\n"
      "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}\n"
      "  batch_size: {values: [16, 32, 64]}\n"
      "search: {method: random, random: {trials: 6, seed: 3}}\n"
      "max_concurrent_trials: 1\n" +
          extra,
      "engine.yaml");
}

// A fresh journal at TempDir()/NAME.log, its path in *path; null (and a failed expectation)
// when it cannot be opened.
std::unique_ptr<JournalWriter> FreshJournal(const std::string& name, std::string* path) {
  *path = ::testing::TempDir() + "/" + name + ".log";
  std::remove(path->c_str());
  auto journal = JournalWriter::Open(*path);
  EXPECT_TRUE(journal.ok()) << journal.status();
  return journal.ok() ? std::move(*journal) : nullptr;
}

// Completes running trial `n`: `value` at 400 samples as its final report, then its end.
void Complete(SweepEngine& engine, int64_t n, double value) {
  ASSERT_FALSE(*engine.Report(n, 400, value, /*final=*/true));
  ASSERT_TRUE(engine.EndTrial(n, RunEnd::kCompleted, "", "", false).ok());
}

TEST(SweepEngineTest, AFinalReportIsAStepThePrunerSeesButTheTrialCompletes) {
  // Successive halving with rungs at 100, 200, 400 samples and reduction factor 2.
  SweepConfig c = Config(
      "early_terminate: {type: successive_halving, min_resource: 100, reduction_factor: 2}\n");
  SweepEngine engine(c, nullptr);
  // Trial 0 completes: 0.5 at 100, 0.6 at 200, final 0.7 at 400.
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
  EXPECT_FALSE(*engine.Report(0, 100, 0.5, false));
  EXPECT_FALSE(*engine.Report(0, 200, 0.6, false));
  EXPECT_FALSE(*engine.Report(0, 400, 0.7, /*final=*/true));
  const Trial& t0 = engine.study().trials[0];
  EXPECT_EQ(t0.intermediate_values.rbegin()->first, 400);    // the final value is keyed too
  EXPECT_EQ(t0.system_attrs.count("completed_rung_2"), 1u);  // the rung at 400 is recorded
  ASSERT_EQ(engine.EndTrial(0, RunEnd::kCompleted, "", "", false)->trial->state,
            TrialState::kComplete);
  EXPECT_EQ(*engine.study().trials[0].value, 0.7);
  // Trial 1 is worse at its final report: successive halving would prune it there, but it has
  // trained to the end, so it completes.
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(1));
  EXPECT_FALSE(*engine.Report(1, 100, 0.55, false));
  EXPECT_FALSE(*engine.Report(1, 200, 0.65, false));
  EXPECT_FALSE(*engine.Report(1, 400, 0.1, /*final=*/true));
  EXPECT_EQ(engine.EndTrial(1, RunEnd::kCompleted, "", "", false)->trial->state,
            TrialState::kComplete);
  // Trial 2 is worse at 100: pruned there, later reports ignored.
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(2));
  EXPECT_TRUE(*engine.Report(2, 100, 0.1, false));
  EXPECT_TRUE(engine.StopDecided(2));
  EXPECT_FALSE(*engine.Report(2, 200, 0.9, false));
  EXPECT_EQ(engine.study().trials[2].intermediate_values.size(), 1u);
  EXPECT_EQ(engine.EndTrial(2, RunEnd::kStopped, "", "", false)->trial->state, TrialState::kPruned);
  EXPECT_EQ(*engine.study().trials[2].value, 0.1);
  EXPECT_EQ(engine.Best()->number, 0);
}

TEST(SweepEngineTest, FailedTrialsAreRetriedThenGivenUp) {
  SweepConfig c = Config("early_terminate: {type: none}\nmax_failures_per_trial: 1\n");
  SweepEngine engine(c, nullptr);
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
  auto first = engine.EndTrial(0, RunEnd::kFailed, "exit code 1", "boom\n", false);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->retried);
  EXPECT_EQ(first->trial->fail_reason, "exit code 1");
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(1));
  const Trial& retry = engine.study().trials[1];
  EXPECT_EQ(retry.params, engine.study().trials[0].params);
  EXPECT_EQ(retry.retry_history, (std::vector<int64_t>{0}));
  auto second = engine.EndTrial(1, RunEnd::kFailed, "killed by signal 9", "", false);
  EXPECT_TRUE(second->gave_up);
  EXPECT_FALSE(second->retried);
  // The next start is the next point, not a third attempt.
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(2));
  EXPECT_EQ(engine.study().trials[2].point, 1);
  // An interruption is no failure of the trial: no retry.
  auto cut = engine.EndTrial(2, RunEnd::kCancelled, "shutdown", "", /*interrupting=*/true);
  EXPECT_EQ(cut->trial->fail_reason, "interrupted");
  EXPECT_FALSE(cut->retried);
}

// A failure a retry cannot help (the trainer's usage error) is not retried, and its point
// counts as failed in the outcome.
TEST(SweepEngineTest, RefusedTrialsAreNotRetriedAndTheirPointFails) {
  SweepConfig c = Config("early_terminate: {type: none}\nmax_failures_per_trial: 2\n");
  SweepEngine engine(c, nullptr);
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
  auto refused = engine.EndTrial(0, RunEnd::kRefused, "rank 0: exit code 2", "usage\n", false);
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused->refused);
  EXPECT_FALSE(refused->retried);
  EXPECT_FALSE(refused->gave_up);
  EXPECT_EQ(refused->trial->state, TrialState::kFail);
  // The next start is the next point, not a retry.
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(1));
  EXPECT_EQ(engine.study().trials[1].point, 1);
  EXPECT_TRUE(engine.study().trials[1].retry_history.empty());
  Complete(engine, 1, 0.5);
  const SweepEngine::Outcome o = engine.GetOutcome();
  EXPECT_EQ(o.points, 2);
  EXPECT_EQ(o.failed_points, 1);
  EXPECT_EQ(o.completed, 1);
}

TEST(SweepEngineTest, FillRunsUpToTheConcurrencyAndDoneEndsTheSweep) {
  SweepConfig c = Config("early_terminate: {type: none}\n");
  c.max_concurrent_trials = 4;
  SweepEngine engine(c, nullptr);
  EXPECT_EQ(engine.Fill()->size(), 4u);
  EXPECT_TRUE(engine.Fill()->empty());
  for (int64_t n : engine.Running()) Complete(engine, n, 0.1 * static_cast<double>(n));
  EXPECT_EQ(engine.Fill()->size(), 2u);  // 6 random trials in all
  EXPECT_FALSE(engine.Done());
  for (int64_t n : engine.Running()) {
    ASSERT_TRUE(engine.EndTrial(n, RunEnd::kFailed, "x", "", /*interrupting=*/true).ok());
  }
  EXPECT_TRUE(engine.Done());
  EXPECT_FALSE(engine.Stuck());
}

TEST(SweepEngineTest, TheJournalHoldsTheAxisThePrunerAndTheBounds) {
  SweepConfig c =
      Config("early_terminate: {type: hyperband, min_resource: 100, reduction_factor: 3}\n");
  c.lr.distribution = "categorical";
  c.lr.values = {1e-4, 1e-3};
  std::string path;
  const std::unique_ptr<JournalWriter> journal = FreshJournal("engine_journal", &path);
  SweepEngine engine(c, journal.get());
  ASSERT_TRUE(engine.CreateStudy().ok());
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
  ASSERT_FALSE(*engine.Report(0, 100, 0.4, false));
  Complete(engine, 0, 0.5);
  auto lines = engine.RecordBounds();
  ASSERT_TRUE(lines.ok()) << lines.status();
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  const auto& attrs = contents->study_user_attrs;
  EXPECT_EQ(attrs.at("resource"), "\"samples\"");
  EXPECT_EQ(attrs.at("samples_per_epoch"), "400");
  EXPECT_EQ(attrs.at("pruner"),
            "{\"type\": \"hyperband\", \"min_resource\": 100, \"max_resource\": \"auto\", "
            "\"reduction_factor\": 3, \"bootstrap_count\": 0}");
  EXPECT_EQ(contents->study.trials[0].intermediate_values,
            (std::map<int64_t, double>{{100, 0.4}, {400, 0.5}}));
  // The one trial is the best; its batch and lr are bounds or not, as the attr says.
  const Trial& best = contents->study.trials[0];
  const auto at = nlohmann::json::parse(attrs.at("best_at_bound"));
  const double batch = best.params.at("batch_size");
  EXPECT_EQ(at.contains("batch_size"), batch == 16 || batch == 64);
  EXPECT_FALSE(at.contains("lr"));  // a list of two values has no bounds
  EXPECT_EQ(lines->size(), at.size());
}

// During a sweep the report is drawn from memory (SweepEngine::Snapshot), never from the journal:
// the page must be the one `hpo report` draws from the journal, byte for byte, at any moment, and
// after a resume too. The trials here complete, get pruned, fail and are retried, carry
// placements, workers and GPU telemetry, and one is running.
TEST(SweepEngineTest, TheSnapshotDrawsTheReportTheJournalDraws) {
  SweepConfig c = Config(
      "early_terminate: {type: median, n_startup_trials: 1, n_warmup_steps: 0, interval_steps: "
      "1}\nmax_failures_per_trial: 1\n");
  std::string path;
  auto same_page = [&](const SweepEngine& engine, const std::string& when) {
    auto journal = ReadJournal(path);
    ASSERT_TRUE(journal.ok()) << journal.status();
    auto from_journal = RenderHtmlReport(*journal, path);
    auto from_memory = RenderHtmlReport(engine.Snapshot(), path);
    ASSERT_TRUE(from_journal.ok() && from_memory.ok());
    EXPECT_EQ(*from_memory, *from_journal) << when;
    EXPECT_EQ(engine.Snapshot().study.trials.size(), journal->study.trials.size()) << when;
  };
  {
    const std::unique_ptr<JournalWriter> journal = FreshJournal("engine_snapshot", &path);
    SweepEngine engine(c, journal.get());
    ASSERT_TRUE(engine.CreateStudy().ok());
    ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
    ASSERT_TRUE(engine.SetPlacement(0, "a (rank 0)").ok());
    ASSERT_TRUE(engine.SetWorker(0, "a/slot-0/w-7#1").ok());
    ASSERT_TRUE(engine.SetGpuUsage(0, 55.5, 1234.0, 99.0).ok());
    ASSERT_FALSE(*engine.Report(0, 100, 0.6, false));
    Complete(engine, 0, 0.7);
    ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(1));
    ASSERT_TRUE(*engine.Report(1, 100, 0.1, false));  // below the median: stop
    ASSERT_TRUE(engine.EndTrial(1, RunEnd::kStopped, "", "", false).ok());
    ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(2));
    ASSERT_TRUE(engine.EndTrial(2, RunEnd::kFailed, "exit code 1", "boom <b>\n", false)->retried);
    ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(3));  // the retry
    same_page(engine, "with trial 3 running");
    Complete(engine, 3, 0.65);
    ASSERT_TRUE(engine.RecordBounds().ok());
    same_page(engine, "after the bounds");
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  // SetPlacement also recorded when trial 0's ranks started (the report's timeline draws it).
  const Trial& placed = contents->study.trials[0];
  EXPECT_EQ(placed.ranks_started.size(), placed.datetime_start.size());  // Optuna's format
  EXPECT_GE(placed.ranks_started, placed.datetime_start);
  EXPECT_EQ(contents->study.trials[1].ranks_started, "");  // never placed
  auto journal = JournalWriter::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.status();
  SweepEngine resumed(c, journal->get());
  ASSERT_TRUE(resumed.Resume(std::move(*contents)).ok());
  ASSERT_EQ(*resumed.StartTrial(), std::optional<int64_t>(4));
  Complete(resumed, 4, 0.5);
  same_page(resumed, "resumed");
}

// Interrupted attempts (Ctrl-C, --resume, Ctrl-C, ...) are no failures of the point: the retry
// line's attempt number counts only real failures, as Settled() does.
TEST(SweepEngineTest, TheAttemptNumberCountsOnlyRealFailures) {
  SweepConfig c = Config("early_terminate: {type: none}\nmax_failures_per_trial: 2\n");
  JournalContents contents;
  {
    SweepEngine first(c, nullptr);
    ASSERT_EQ(*first.StartTrial(), std::optional<int64_t>(0));
    EXPECT_EQ(first.Attempt(0), 1);
    EXPECT_EQ(first.RetryLine(0), "");  // a first attempt retries nothing
    ASSERT_TRUE(first.EndTrial(0, RunEnd::kCancelled, "", "", /*interrupting=*/true).ok());
    contents.study = first.study();
  }
  // Resumed twice, interrupted each time.
  for (int64_t number : {1, 2}) {
    SweepEngine resumed(c, nullptr);
    auto r = resumed.Resume(contents);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->to_rerun, 1);
    ASSERT_EQ(*resumed.StartTrial(), std::optional<int64_t>(number));
    EXPECT_EQ(resumed.study().trials[number].retry_history.size(), static_cast<size_t>(number));
    EXPECT_EQ(resumed.Attempt(number), 1) << "trial " << number;
    EXPECT_EQ(resumed.RetryLine(number),
              absl::StrCat("trial ", number, " retries trial ", number - 1, " (attempt 1 of 3)\n"));
    ASSERT_TRUE(resumed.EndTrial(number, RunEnd::kCancelled, "", "", true).ok());
    contents.study = resumed.study();
  }
  // Resumed once more: this attempt fails for real, and the retry is attempt 2 of 3.
  SweepEngine resumed(c, nullptr);
  ASSERT_TRUE(resumed.Resume(contents).ok());
  ASSERT_EQ(*resumed.StartTrial(), std::optional<int64_t>(3));
  EXPECT_EQ(resumed.Attempt(3), 1);
  auto failed = resumed.EndTrial(3, RunEnd::kFailed, "exit code 2", "", false);
  ASSERT_TRUE(failed->retried);
  ASSERT_EQ(*resumed.StartTrial(), std::optional<int64_t>(4));
  EXPECT_EQ(resumed.study().trials[4].retry_history.size(), 4u);  // "attempt 5" before
  EXPECT_EQ(resumed.Attempt(4), 2);
  EXPECT_EQ(resumed.RetryLine(4), "trial 4 retries trial 3 (attempt 2 of 3)\n");
  EXPECT_EQ(resumed.study().trials[4].point, 0);
}

// Runs every point of `engine` to its end: completing those in `complete`, failing the others
// on every attempt.
void RunAll(SweepEngine& engine, const std::set<int64_t>& complete) {
  while (!engine.Done()) {
    auto started = engine.Fill();
    ASSERT_TRUE(started.ok()) << started.status();
    ASSERT_FALSE(started->empty());
    for (int64_t n : *started) {
      const int64_t point = engine.study().trials[n].point;
      if (complete.count(point) > 0) {
        Complete(engine, n, 0.5);
      } else {
        ASSERT_TRUE(engine.EndTrial(n, RunEnd::kFailed, "exit code 2", "", false).ok());
      }
    }
  }
}

TEST(SweepEngineTest, ASweepFailsWhenNoTrialCompleted) {
  SweepEngine engine(Config("early_terminate: {type: none}\nmax_failures_per_trial: 2\n"), nullptr);
  RunAll(engine, {});
  const SweepEngine::Outcome o = engine.GetOutcome();
  EXPECT_EQ(o.points, 6);
  EXPECT_EQ(o.completed, 0);
  EXPECT_EQ(o.failed_points, 6);
  EXPECT_EQ(engine.study().trials.size(), 18u);  // 6 points x 3 attempts
  EXPECT_EQ(SweepFailure(o, 0.5), std::optional<std::string>("no trial completed"));
  EXPECT_EQ(SweepFailure(o, 1.0), std::optional<std::string>("no trial completed"));
}

TEST(SweepEngineTest, ASweepFailsWhenMoreThanTheShareOfItsPointsFailed) {
  SweepEngine engine(Config("early_terminate: {type: none}\nmax_failures_per_trial: 1\n"), nullptr);
  RunAll(engine, {0, 5});
  const SweepEngine::Outcome o = engine.GetOutcome();
  EXPECT_EQ(o.points, 6);
  EXPECT_EQ(o.completed, 2);
  EXPECT_EQ(o.failed_points, 4);
  EXPECT_EQ(SweepFailure(o, 0.5),
            std::optional<std::string>("4 of 6 points (66%) failed after their retries, more "
                                       "than --max_failed_share 0.5"));
  EXPECT_EQ(SweepFailure(o, 0.7), std::nullopt);
  EXPECT_EQ(SweepFailure({6, 3, 3}, 0.5), std::nullopt);  // exactly the share: not more
  EXPECT_EQ(SweepFailure({6, 6, 0}, 0.0), std::nullopt);
}

TEST(SweepEngineTest, InterruptedPointsAreNotFailedOnes) {
  SweepEngine engine(Config("early_terminate: {type: none}\n"), nullptr);
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
  Complete(engine, 0, 0.5);
  ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(1));
  ASSERT_TRUE(engine.InterruptRunning("interrupted").ok());
  const SweepEngine::Outcome o = engine.GetOutcome();
  EXPECT_EQ(o.points, 2);
  EXPECT_EQ(o.failed_points, 0);
  EXPECT_EQ(SweepFailure(o, 0.0), std::nullopt);
}

// --resume with a changed search space: the engine names the parameters whose distributions
// differ from those the journal's trials were run with.
TEST(SweepEngineTest, ResumeNamesTheParametersThatChanged) {
  const SweepConfig before = Config("early_terminate: {type: none}\n");
  std::string path;
  {
    const std::unique_ptr<JournalWriter> journal = FreshJournal("engine_changed_space", &path);
    SweepEngine engine(before, journal.get());
    ASSERT_TRUE(engine.CreateStudy().ok());
    ASSERT_EQ(*engine.StartTrial(), std::optional<int64_t>(0));
    Complete(engine, 0, 0.5);
  }
  auto contents = ReadJournal(path);
  ASSERT_TRUE(contents.ok()) << contents.status();
  {
    SweepEngine same(before, nullptr);
    auto r = same.Resume(*contents);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->changed_params.empty()) << r->changed_params[0];
  }
  SweepConfig after = before;
  after.lr.max = 1e-2;
  after.batch_sizes = {16, 32, 64, 128};
  SweepEngine changed(after, nullptr);
  auto r = changed.Resume(*contents);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->changed_params, (std::vector<std::string>{"batch_size", "lr"}));
}

// random_then_grid on 4 seats, whose climb fills its rounds (FillSeats).
SweepConfig ClimbConfig(int64_t seats) {
  return ConfigFromYaml(
      "name: climb\n"
      "metric: {name: m, goal: maximize}\n"
      "trainer: {synthetic: {steps: 4, samples_per_step: 100}}\n"
      "parameters:\n"
      "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}\n"
      "  batch_size: {values: [16, 32, 64, 128]}\n"
      "search: {method: random_then_grid, random: {trials: 4, seed: 0},\n"
      "         grid: {top_k: 1, lr_points: 9, lr_span: 10.0, batch_neighbors: 1}}\n"
      "early_terminate: {type: none}\n"
      "max_concurrent_trials: " +
          std::to_string(seats) + "\n",
      "climb.yaml");
}

// A bowl highest at (lr 1e-3, batch 128) with ripples: one-at-a-time, the climb stops in the
// dip next to the local grid's best (14 trials); filling its seats, it looks past it and
// reaches the top (18).
double Rough(const Params& p) {
  const double lr = std::log10(p.at("lr")), batch = std::log2(p.at("batch_size"));
  return -std::pow(lr + 3, 2) - std::pow(batch - 7, 2) + 0.3 * std::sin(7 * lr + 5 * batch);
}

// Runs `engine` in rounds: it starts what it may, then every running trial completes with
// Rough's value; until it is done or, after a start, `stop_at` trials exist (they stay running).
void RunRounds(SweepEngine& engine, size_t stop_at) {
  while (!engine.Done()) {
    auto started = engine.Fill();
    ASSERT_TRUE(started.ok()) << started.status();
    if (engine.study().trials.size() >= stop_at) return;
    ASSERT_FALSE(started->empty()) << "nothing runs";
    for (int64_t n : *started) {
      Complete(engine, n, Rough(engine.study().trials[static_cast<size_t>(n)].params));
    }
  }
}

// Each point of the plan with the params its COMPLETE trial ran.
std::map<int64_t, Params> CompletedPoints(const Study& study) {
  std::map<int64_t, Params> out;
  for (const Trial& t : study.trials) {
    if (t.state == TrialState::kComplete) out[t.point] = t.params;
  }
  return out;
}

// The climb's rounds are filled to the width the sweep started with: interrupted anywhere and
// resumed at one trial at a time, the sweep completes the points the uninterrupted one did,
// each once.
TEST(SweepEngineTest, AResumedClimbKeepsTheWidthItWasPlannedAt) {
  SweepEngine whole(ClimbConfig(4), nullptr);
  ASSERT_TRUE(whole.CreateStudy().ok());
  RunRounds(whole, SIZE_MAX);
  const std::map<int64_t, Params> expected = CompletedPoints(whole.study());
  SweepEngine narrow(ClimbConfig(1), nullptr);
  ASSERT_TRUE(narrow.CreateStudy().ok());
  RunRounds(narrow, SIZE_MAX);
  ASSERT_NE(CompletedPoints(narrow.study()), expected) << "the width changes nothing: no test";
  for (size_t stop = 5; stop < whole.study().trials.size(); ++stop) {
    std::string path;
    {
      const std::unique_ptr<JournalWriter> journal =
          FreshJournal("engine_climb_" + std::to_string(stop), &path);
      SweepEngine first(ClimbConfig(4), journal.get());
      ASSERT_TRUE(first.CreateStudy().ok());
      RunRounds(first, stop);
    }
    auto contents = ReadJournal(path);
    ASSERT_TRUE(contents.ok()) << contents.status();
    SweepEngine resumed(ClimbConfig(1), nullptr);
    ASSERT_TRUE(resumed.Resume(std::move(*contents)).ok());
    RunRounds(resumed, SIZE_MAX);
    EXPECT_EQ(CompletedPoints(resumed.study()), expected) << "interrupted at " << stop;
    int64_t complete = 0;
    for (const Trial& t : resumed.study().trials) complete += t.state == TrialState::kComplete;
    EXPECT_EQ(complete, static_cast<int64_t>(expected.size())) << stop << ": a point ran twice";
  }
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
