// hpo sweep --multirun: Hydra's comma-separated sweeps become a grid over exactly the values
// listed, the file's other parameters fixed or refused, and the plan says so.
#include "hpo/config/multirun.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_plan.h"
#include "hpo/samplers/random_sampler.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A sweep of a trainer config (so that trainer keys can be searched) whose parameters are
// `parameters` (the lines under `parameters:`).
std::string Sweep(const std::string& name, const std::vector<std::string>& parameters,
                  const std::string& method_line = "search: {method: random_then_grid}") {
  const std::string trainer = WriteFile(
      "mr_trainer.yaml", "model: {path: m}\ntask: {type: sts, train: a.csv, format: stsb}\n");
  std::vector<std::string> lines = {
      "name: mr",                                              // 1
      "metric: {name: eval/spearman, goal: maximize}",         // 2
      "trainer: {config: " + trainer + "}",                    // 3
      method_line,                                             // 4
      "early_terminate: {type: median, n_startup_trials: 3}",  // 5
      "parameters:",                                           // 6
  };
  for (const std::string& p : parameters) lines.push_back("  " + p);  // 7...
  return WriteFile(name, absl::StrJoin(lines, "\n") + "\n");
}

const std::vector<std::string> kLrAndBatch = {
    "lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}",  // 7
    "batch_size: {values: [16, 32, 64, 128]}",                    // 8
};

TEST(SplitSweepValuesTest, SplitsAtCommasOutsideBrackets) {
  EXPECT_EQ(SplitSweepValues("1e-5,3e-5, 1e-4"),
            (std::vector<std::string>{"1e-5", "3e-5", "1e-4"}));
  EXPECT_EQ(SplitSweepValues("32"), std::vector<std::string>{"32"});
  EXPECT_EQ(SplitSweepValues("[16,32],{a: 1, b: 2}"),
            (std::vector<std::string>{"[16,32]", "{a: 1, b: 2}"}));
  EXPECT_EQ(SplitSweepValues("'a,b',c"), (std::vector<std::string>{"'a,b'", "c"}));
  EXPECT_EQ(SplitSweepValues("choice(1,2)"), std::vector<std::string>{"choice(1,2)"});
  EXPECT_EQ(SplitSweepValues("1,,2"), (std::vector<std::string>{"1", "", "2"}));
}

TEST(MultirunTest, SweepsExactlyTheListedCombinations) {
  const std::string path = Sweep("mr_grid.yaml", kLrAndBatch);
  auto c =
      LoadSweepConfigInProcess(path, {"lr=1e-5,3e-5,1e-4", "batch_size=32,16"}, /*multirun=*/true);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->method, "grid");
  EXPECT_EQ(c->lr.distribution, "categorical");
  EXPECT_EQ(c->lr.values, (std::vector<double>{1e-5, 3e-5, 1e-4}));
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{16, 32}));
  EXPECT_TRUE(c->params.empty());
  EXPECT_EQ(MaxPlannedTrials(*c), 6);
  EXPECT_EQ(c->pruner->type(), "median");  // the rest of the file applies
  const std::string plan = DescribeSweepPlan(*c);
  EXPECT_THAT(plan, HasSubstr("  search        grid\n"));
  EXPECT_THAT(plan, HasSubstr("    grid        3 lr points x 2 batch sizes\n"));
  EXPECT_THAT(plan, HasSubstr("    planned     at most 6 trials\n"));
  EXPECT_THAT(plan, HasSubstr("categorical {16, 32}"));
  EXPECT_THAT(plan, Not(HasSubstr("random points")));
}

TEST(MultirunTest, OneValueFixesAParameterAndTrainerKeysSweepToo) {
  const std::string path =
      Sweep("mr_keys.yaml", {"train: {lr: {values: [2.0e-5]}}", "batch_size: {values: [32]}",
                             "train.weight_decay: {distribution: uniform, min: 0.0, max: 0.1}",
                             "warmup_ratio: {values: [0.1]}"});
  auto c = LoadSweepConfigInProcess(
      path, {"weight_decay=0.0,0.01", "model.pooling=mean,cls", "search.random.trials=2"},
      /*multirun=*/true);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lr.values, std::vector<double>{2e-5});  // the file's one value, kept
  EXPECT_EQ(c->batch_sizes, std::vector<int64_t>{32});
  ASSERT_EQ(c->params.size(), 3u);
  const ParamSpec* wd = c->FindParam("train.weight_decay");
  ASSERT_NE(wd, nullptr);
  EXPECT_EQ(wd->values, (std::vector<double>{0.0, 0.01}));
  const ParamSpec* pooling = c->FindParam("model.pooling");
  ASSERT_NE(pooling, nullptr);
  EXPECT_EQ(pooling->labels, (std::vector<std::string>{"mean", "cls"}));
  EXPECT_EQ(RandomSpecOf(*c).trials, 2);  // a section's override applies as without --multirun
  EXPECT_EQ(MaxPlannedTrials(*c), 4);
  // And a swept lr replaces the file's, whatever its spelling (train: {lr: ...}).
  auto lr = LoadSweepConfigInProcess(path, {"lr=1e-4,1e-3", "weight_decay=0"}, /*multirun=*/true);
  ASSERT_TRUE(lr.ok()) << lr.status();
  EXPECT_EQ(lr->lr.values, (std::vector<double>{1e-4, 1e-3}));
  EXPECT_EQ(MaxPlannedTrials(*lr), 2);
}

TEST(MultirunTest, AnUnsweptParameterWithSeveralValuesIsRefused) {
  const std::string path = Sweep("mr_refuse.yaml", kLrAndBatch);
  EXPECT_EQ(std::string(LoadSweepConfigInProcess(path, {"lr=1e-5,1e-4"}, true).status().message()),
            path +
                ":8: parameters.batch_size: takes 4 values, but --multirun runs only the "
                "combinations listed on the command line: sweep it too (batch_size=A,B) or "
                "give it one value (batch_size=A)");
  EXPECT_EQ(std::string(LoadSweepConfigInProcess(path, {"batch_size=16"}, true).status().message()),
            path +
                ":7: parameters.lr: takes a range, but --multirun runs only the combinations "
                "listed on the command line: sweep it too (lr=A,B) or give it one value "
                "(lr=A)");
}

TEST(MultirunTest, ErrorsNameTheOverrideAsTyped) {
  const std::string path = Sweep("mr_errors.yaml", kLrAndBatch);
  auto error = [&](const std::vector<std::string>& overrides) {
    return std::string(
        LoadSweepConfigInProcess(path, overrides, /*multirun=*/true).status().message());
  };
  EXPECT_EQ(error({"lr=1e-5", "batch_size=16,abc"}),
            path +
                ": override 'batch_size=16,abc': parameters.batch_size.values[1]: expected "
                "integers, got 'abc'");
  EXPECT_EQ(error({"lr=1e-5,", "batch_size=16"}),
            path + ": override 'lr=1e-5,': an empty value in the comma-separated list");
  EXPECT_EQ(error({"lr=1e-5", "train.lr=1e-4", "batch_size=16"}),
            path + ": override 'train.lr=1e-4': lr is swept twice (also by 'lr=1e-5')");
  EXPECT_THAT(error({"lr=1e-5", "batch_size=16", "bogus=1,2"}),
              HasSubstr(": override 'bogus=1,2': bogus is not a trainer key (the trainer reads "));
  EXPECT_EQ(error({"lr=1e-5", "batch_size=16", "output.dir=a,b"}),
            path +
                ": override 'output.dir=a,b': parameters.output.dir: hpo gives each trial its "
                "own output.dir; it cannot be searched");
  EXPECT_EQ(error({"lr=1e-5", "batch_size=16", "search.method=random"}),
            path +
                ": override 'search.method=random': search.method: --multirun runs the grid "
                "of the values listed; drop this override");
}

TEST(MultirunTest, WandbTopLevelMethodBecomesGrid) {
  const std::string path = Sweep("mr_wandb.yaml", kLrAndBatch, "method: random");
  auto c = LoadSweepConfigInProcess(path, {"lr=1e-5,1e-4", "batch_size=16"}, /*multirun=*/true);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->method, "grid");
  EXPECT_EQ(MaxPlannedTrials(*c), 2);
}

TEST(AddMultirunHintTest, OnlyForAnOverrideWithACommaThatTheErrorNames) {
  const absl::Status bad = absl::InvalidArgumentError(
      "x.yaml: override 'search.random.trials=4,8': search.random.trials: expected an integer");
  EXPECT_EQ(AddMultirunHint(bad, {"search.random.trials=4,8"}).message(),
            std::string(bad.message()) + " (to sweep over comma-separated values, add --multirun)");
  EXPECT_EQ(AddMultirunHint(bad, {"lr=1,2"}).message(), bad.message());
  const absl::Status list = absl::InvalidArgumentError("x.yaml: override 'a=[1,2]': a: bad");
  EXPECT_EQ(AddMultirunHint(list, {"a=[1,2]"}).message(), list.message());
  EXPECT_TRUE(AddMultirunHint(absl::OkStatus(), {"a=1,2"}).ok());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
