// Sweep YAML: the shipped configs parse, and every bad input is an error naming the file, the
// line and the dotted key.
#include "hpo/config/sweep_config.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/samplers/grid_sampler.h"
#include "hpo/samplers/random_sampler.h"
#include "tests/hpo/base_sweep.h"
#include "tests/hpo/trainer_in_process.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(SweepConfigTest, BaseParses) {
  auto c = LoadSweepConfigInProcess(WriteFile("base.yaml", BaseWith(0, "")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "t");
  EXPECT_EQ(c->metric_name, "eval/spearman");
  EXPECT_TRUE(c->maximize);
  EXPECT_TRUE(c->trainer.synthetic);
  EXPECT_EQ(c->trainer.synthetic_spec.steps, 20);
  EXPECT_EQ(c->lr.distribution, "log_uniform");
  EXPECT_DOUBLE_EQ(c->lr.min, 1e-5);
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{16, 32, 64, 128}));
  EXPECT_EQ(c->method, "random_then_grid");
  EXPECT_EQ(RandomSpecOf(*c).trials, 8);
  EXPECT_EQ(GridSpecOf(*c).lr_points, 5);
  EXPECT_EQ(c->pruner->type(), "median");
  EXPECT_EQ(PrunerField(*c, "n_startup_trials"), std::to_string(3));
  EXPECT_EQ(PrunerField(*c, "n_min_trials"), std::to_string(1));  // Optuna's default
  EXPECT_EQ(c->max_concurrent_trials, 4);
  EXPECT_EQ(c->journal, "runs/t/journal.log");
}

TEST(SweepConfigTest, OverridesApply) {
  auto c =
      LoadSweepConfigInProcess(WriteFile("ov.yaml", BaseWith(0, "")),
                               {"search.random.trials=4", "parameters.batch_size.values=[64, 8]",
                                "early_terminate={type: successive_halving, reduction_factor: 3}"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(RandomSpecOf(*c).trials, 4);
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{8, 64}));  // sorted
  EXPECT_EQ(c->pruner->type(), "successive_halving");
  EXPECT_EQ(PrunerField(*c, "reduction_factor"), std::to_string(3));
  EXPECT_EQ(PrunerField(*c, "min_resource"), "\"auto\"");
}

TEST(SweepConfigTest, ShippedConfigsParse) {
  // Runs from the workspace root of the runfiles tree, as a user runs from the repo root.
  auto lr = LoadSweepConfigInProcess("configs/lr.yaml");
  ASSERT_TRUE(lr.ok()) << lr.status();
  EXPECT_FALSE(lr->trainer.synthetic);
  EXPECT_EQ(lr->trainer.config, "configs/sbert_stsb.yaml");
  EXPECT_EQ(lr->trainer.overrides,
            (std::vector<std::string>{"train.epochs=1", "output.checkpoint=false"}));
  auto synthetic = LoadSweepConfigInProcess("configs/synthetic.yaml");
  ASSERT_TRUE(synthetic.ok()) << synthetic.status();
  EXPECT_TRUE(synthetic->trainer.synthetic);
  EXPECT_EQ(synthetic->max_concurrent_trials, 4);
}

const BadCase kBadCases[] = {
    {2, "metric: {name: eval/spearman, goal: max}",
     "metric.goal: expected one of maximize, minimize; got 'max'"},
    {4, "resources: {gpus_per_trial: two}",
     "resources.gpus_per_trial: expected a number, got 'two'"},
    {4, "resources: {gpus_per_trial: 0}",
     "resources.gpus_per_trial: must be > 0 (ranks, or 1/N of a GPU)"},
    {6, "  lr: {distribution: log_uniform, min: 1.0e-3, max: 1.0e-5}",
     "parameters.lr.max: must be greater than min (0.001), got 1e-05"},
    {6, "  lr: {distribution: normal, min: 1.0e-5, max: 1.0e-3}",
     "parameters.lr.distribution: expected one of log_uniform, uniform, log_uniform_values; "
     "got 'normal'"},
    {6, "  lr: {distribution: log_uniform, min: 0, max: 1.0e-3}",
     "parameters.lr.min: must be > 0 for log_uniform, got 0"},
    {6, "  lr: {values: []}", "parameters.lr.values: must list at least one learning rate"},
    {6, "  lr: {min: 1.0e-5, max: 1.0e-3}", "parameters.lr: missing required key 'distribution'"},
    {7, "  batch_size: {values: [16, -32]}",
     "parameters.batch_size.values: batch sizes must be positive, got -32"},
    {7, "  batch_size: {values: [16, 32, 16]}",
     "parameters.batch_size.values: batch size 16 is listed twice"},
    {7, "  batch_size: {values: [16, big]}",
     "parameters.batch_size.values[1]: expected integers, got 'big'"},
    {8, "lr_scaling: {rule: sqrt, base_batch: 32}",
     "lr_scaling.rule: expected one of linear, none; got 'sqrt'"},
    {10, "  method: bayes",
     "search.method: expected one of random, grid, random_then_grid, random_then_local, tpe; "
     "got 'bayes'"},
    {11, "  random: {trials: 0, seed: 0}", "search.random.trials: must be >= 1, got 0"},
    {12, "  grid: {top_k: 2, lr_points: 5, lr_span: 0.5, batch_neighbors: 1}",
     "search.grid.lr_span: must be >= 1 (the ratio of the largest to the smallest grid lr), "
     "got 0.5"},
    {12, "  grid: {top_k: 9, lr_points: 5, lr_span: 4.0, batch_neighbors: 1}",
     "search.grid.top_k: is 9 but the random phase runs only 8 trials"},
    {13, "early_terminate: {type: asha}",
     "early_terminate.type: expected one of none, median, successive_halving, hyperband, "
     "percentile; "
     "got 'asha'"},
    {13, "early_terminate: {type: hyperband, bootstrap_count: 2}",
     "early_terminate.bootstrap_count: needs an explicit max_resource (not auto)"},
    {13, "early_terminate: {type: hyperband, min_resource: 0}",
     "early_terminate.min_resource: must be >= 1, got 0"},
    {13, "early_terminate: {type: median, n_warmup: 2}",
     "early_terminate.n_warmup: unknown key; expected one of: type, n_startup_trials, "
     "n_warmup_steps, interval_steps, n_min_trials"},
    {13, "early_terminate: {type: successive_halving, reduction_factor: 1}",
     "early_terminate.reduction_factor: must be >= 2, got 1"},
    {13, "early_terminate: {type: successive_halving, bootstrap_count: 2}",
     "early_terminate.bootstrap_count: needs an explicit min_resource (not auto)"},
    {14, "max_concurrent_trials: -1", "max_concurrent_trials: must be >= 1, got -1"},
    {15, "max_failures_per_trial: many", "max_failures_per_trial: expected an integer, got 'many'"},
    {1, "name: 'bad name!'", "name: must be 1-128 letters, digits, '-', '_' or '.'"},
    {15, "max_failure_per_trial: 2",
     "max_failure_per_trial: unknown key; expected one of: name, metric, trainer, resources, "
     "parameters, lr_scaling, search, method, early_terminate, max_concurrent_trials, "
     "max_failures_per_trial, journal"},
    {14, "name: again", "name: duplicate key (first given on line 1)"},
    {3, "trainer: {config: x.yaml, synthetic: {steps: 3}}",
     "trainer: give exactly one of 'config' (a trainer YAML), 'program' (a command of your own) "
     "or 'synthetic'"},
    {3, "trainer: {synthetic: {steps: 20, noise: -1}}",
     "trainer.synthetic.noise: must be >= 0, got -1"},
    {3, "trainer: {synthetic: {stepz: 20}}",
     "trainer.synthetic.stepz: unknown key; expected one of: steps, samples_per_step, "
     "seconds_per_step, noise, seed, memory_mib, oom_when_shared"},
    {4, "resources: 4", "resources: expected a mapping, got '4'"},
    {4, "resources: {gpus_per_trial: 1, env: {LD_PRELOAD: /x.so}}",
     "resources.env.LD_PRELOAD: loads code of its choosing into the trainer; agents never pass "
     "it (docs/CONFIG.md: resources.env)"},
    {4, "resources: {env: {CUDA_INJECTION64_PATH: /x.so}}",
     "resources.env.CUDA_INJECTION64_PATH: loads code of its choosing into the trainer; agents "
     "never pass it (docs/CONFIG.md: resources.env)"},
    {4, "resources: {env: {NCCL_NET_PLUGIN: x}}",
     "resources.env.NCCL_NET_PLUGIN: loads code of its choosing into the trainer; agents never "
     "pass it (docs/CONFIG.md: resources.env)"},
    {4, "resources: {env: {TUNEFLEET_BIN_DIR: /tmp/bin}}",
     "resources.env.TUNEFLEET_BIN_DIR: says which program, socket or slot the agent uses; agents "
     "never pass it (docs/CONFIG.md: resources.env)"},
    {4, "resources: {env: {1X: a}}", "resources.env.1X: is not an environment variable name"},
    {4, "resources: {reuse_workers: maybe}",
     "resources.reuse_workers: expected true or false, got 'maybe'"},
    {4, "resources: {worker_max_trials: 0}", "resources.worker_max_trials: must be >= 1, got 0"},
    {4, "resources: {worker_max_trials: lots}",
     "resources.worker_max_trials: expected an integer, got 'lots'"},
    {4, "resources: {worker_max_trials: 4294967296}",
     "resources.worker_max_trials: must be <= 2147483647, got 4294967296"},
    {4, "resources: {reuse_worker: true}",
     "resources.reuse_worker: unknown key; expected one of: gpus_per_trial, trials_per_gpu, "
     "stage, fetch_back, env, reuse_workers, worker_max_trials"},
};

class SweepConfigBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SweepConfigBadInputTest, NamesFileLineAndKey) { ExpectNamesFileLineAndKey(GetParam()); }

INSTANTIATE_TEST_SUITE_P(BadInputs, SweepConfigBadInputTest, ::testing::ValuesIn(kBadCases));

TEST(SweepConfigTest, ResourcesEnvReachesTheConfig) {
  auto c = LoadSweepConfigInProcess(
      WriteFile("env.yaml", BaseWith(4, "resources: {env: {NCCL_DEBUG: WARN, MY_FLAG: 1}}")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->env, (std::map<std::string, std::string>{{"MY_FLAG", "1"}, {"NCCL_DEBUG", "WARN"}}));
}

TEST(SweepConfigTest, WarmWorkersByDefault) {
  auto c = LoadSweepConfigInProcess(WriteFile("warm_default.yaml", BaseWith(0, "")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->reuse_workers);
  EXPECT_EQ(c->worker_max_trials, 16);
}

TEST(SweepConfigTest, WarmWorkerKeysReachTheConfig) {
  auto c = LoadSweepConfigInProcess(WriteFile(
      "warm_off.yaml", BaseWith(4, "resources: {reuse_workers: false, worker_max_trials: 3}")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->reuse_workers);
  EXPECT_EQ(c->worker_max_trials, 3);
  // And as overrides on the command line.
  auto o =
      LoadSweepConfigInProcess(WriteFile("warm_ov.yaml", BaseWith(0, "")),
                               {"resources.worker_max_trials=1", "resources.reuse_workers=true"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->reuse_workers);
  EXPECT_EQ(o->worker_max_trials, 1);
}

TEST(SweepConfigTest, EmptyFile) {
  const std::string path = WriteFile("empty.yaml", "\n# nothing\n");
  EXPECT_EQ(LoadError(path), path + ":1: the file is empty");
}

TEST(SweepConfigTest, MissingMetric) {
  const std::string path =
      WriteFile("nometric.yaml", "name: x\n" + BaseWith(2, "# none").substr(8));
  EXPECT_EQ(LoadError(path), path + ":1: missing required key 'metric'");
}

TEST(SweepConfigTest, BadOverrideNamesIt) {
  const std::string path = WriteFile("ovbad.yaml", BaseWith(0, ""));
  EXPECT_EQ(LoadError(path, {"search.random.trials=abc"}),
            path +
                ": override 'search.random.trials=abc': search.random.trials: expected an "
                "integer, got 'abc'");
}

TEST(SweepConfigTest, MissingTrainerConfig) {
  const std::string path =
      WriteFile("missing_trainer.yaml", BaseWith(3, "trainer: {config: /nonexistent/t.yaml}"));
  EXPECT_EQ(LoadError(path), path + ": trainer.config: /nonexistent/t.yaml: cannot open file");
}

TEST(SweepConfigTest, BadTrainerConfigNamesItsOwnFileAndLine) {
  const std::string trainer =
      WriteFile("bad_trainer.yaml",
                "model: {path: m}\ntask: {type: sts, train: a.csv, format: stsb}\n"
                "train: {batch_size: 0}\n");
  const std::string path =
      WriteFile("uses_bad_trainer.yaml", BaseWith(3, "trainer: {config: " + trainer + "}"));
  EXPECT_EQ(LoadError(path), path + ": trainer.config: " + trainer +
                                 ":3: train.batch_size: must be a positive integer, got 0");
}

TEST(SweepConfigTest, TrainerOverrideIsValidated) {
  const std::string trainer = WriteFile(
      "ok_trainer.yaml", "model: {path: m}\ntask: {type: sts, train: a.csv, format: stsb}\n");
  const std::string path = WriteFile(
      "trainer_override.yaml",
      BaseWith(3, "trainer: {config: " + trainer + ", overrides: {train.grad_accum: 0}}"));
  EXPECT_EQ(
      LoadError(path),
      path + ": trainer.config: " + trainer +
          ": override 'train.grad_accum=0': train.grad_accum: must be a positive integer, got 0");
}

TEST(SweepConfigTest, TrainerConfigGivesGradAccum) {
  const std::string trainer =
      WriteFile("accum_trainer.yaml",
                "model: {path: m}\ntask: {type: sts, train: a.csv, format: stsb}\n"
                "train: {grad_accum: 4}\n");
  const std::string path =
      WriteFile("accum.yaml", BaseWith(3, "trainer: {config: " + trainer + "}"));
  auto c = LoadSweepConfigInProcess(path);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->trainer.grad_accum, 4);
}

TEST(SweepConfigTest, ACommaValueThatFailsSuggestsMultirun) {
  const std::string path = WriteFile("comma.yaml", BaseWith(0, ""));
  EXPECT_EQ(LoadError(path, {"search.random.trials=4,8"}),
            path +
                ": override 'search.random.trials=4,8': search.random.trials: expected an "
                "integer, got '4,8' (to sweep over comma-separated values, add --multirun)");
  // A comma inside brackets is a list, not a sweep.
  EXPECT_EQ(LoadError(path, {"parameters.batch_size.values=[16,x]"}),
            path +
                ": override 'parameters.batch_size.values=[16,x]': "
                "parameters.batch_size.values[1]: expected integers, got 'x'");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
