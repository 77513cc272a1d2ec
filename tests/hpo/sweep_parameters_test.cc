// The `parameters` section: any trainer key as a parameter, by its dotted name, nested, or by
// its last part; the four distributions and W&B's spellings of them; and every mistake caught
// at load time with the file, the line and the key, including values the trainer would refuse.
#include "hpo/config/sweep_parameters.h"

#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/search_space.h"
#include "tests/hpo/trainer_in_process.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A trainer config the sweeps below run (its data file need not exist to load it).
std::string Trainer() {
  return WriteFile("params_trainer.yaml",
                   "model: {path: m, dropout: 0.1}\n"
                   "task: {type: sts, train: /nonexistent/train.csv, format: stsb}\n"
                   "train: {epochs: 1, weight_decay: 0.01}\n");
}

// A sweep of that trainer whose `parameters` section is `parameters` (lines 4 on).
std::string Sweep(const std::string& name, const std::string& parameters) {
  return WriteFile(name,
                   "name: p\n"
                   "metric: {name: eval/spearman}\n"
                   "trainer: {config: " +
                       Trainer() +
                       "}\n"
                       "parameters:\n" +
                       parameters + "early_terminate: {type: none}\n");
}

constexpr char kLrBatch[] =
    "  lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}\n"
    "  batch_size: {values: [16, 32]}\n";

TEST(SweepParametersTest, AnyTrainerKeyByDottedNameNestingOrLastPart) {
  const std::string path = Sweep(
      "p1.yaml", std::string(kLrBatch) +
                     "  train.weight_decay: {distribution: uniform, min: 0.0, max: 0.1}\n"  // 7
                     "  train: {epochs: {distribution: int, min: 1, max: 3}}\n"             // 8
                     "  dropout: {values: [0.0, 0.1]}\n"                                    // 9
                     "  model.pooling: {values: [mean, cls]}\n"                             // 10
                     "  warmup_ratio: {distribution: log_uniform_values, min: 0.01, max: 0.2}\n"
                     "  max_grad_norm: {distribution: categorical, values: [0.5, 1.0]}\n"
                     "  grad_accum: {distribution: int_uniform, min: 1, max: 2}\n");
  auto c = LoadSweepConfigInProcess(path);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->params.size(), 7u);
  EXPECT_EQ(c->params[0].name, "train.weight_decay");
  EXPECT_EQ(c->params[0].distribution, "uniform");
  EXPECT_EQ(c->params[0].line, 7);
  EXPECT_EQ(c->params[1].name, "train.epochs");
  EXPECT_EQ(c->params[1].distribution, "int");
  EXPECT_EQ(c->params[2].name, "model.dropout");
  EXPECT_EQ(c->params[2].values, (std::vector<double>{0.0, 0.1}));
  EXPECT_EQ(c->params[3].labels, (std::vector<std::string>{"mean", "cls"}));
  EXPECT_EQ(c->params[4].name, "train.warmup_ratio");
  EXPECT_EQ(c->params[4].distribution, "log_uniform");
  EXPECT_EQ(c->params[5].distribution, "categorical");
  EXPECT_EQ(c->params[6].name, "train.grad_accum");
  EXPECT_EQ(c->params[6].distribution, "int");
  EXPECT_NE(c->FindParam("model.pooling"), nullptr);
  EXPECT_EQ(c->FindParam("lr"), &c->lr);
  EXPECT_EQ(c->FindParam("train.seed"), nullptr);

  const SearchSpace space = BuildSearchSpace(*c);
  EXPECT_EQ(space.at("train.epochs").ToOptunaJson(),
            "{\"name\": \"IntDistribution\", \"attributes\": {\"log\": false, \"step\": 1, "
            "\"low\": 1, \"high\": 3}}");
  EXPECT_EQ(space.at("model.pooling").ToOptunaJson(),
            "{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [\"mean\", "
            "\"cls\"]}}");
  EXPECT_EQ(space.at("model.dropout").ToOptunaJson(),
            "{\"name\": \"CategoricalDistribution\", \"attributes\": {\"choices\": [0.0, 0.1]}}");
  EXPECT_EQ(ParamValueText(c->params[3], 1), "cls");
  EXPECT_EQ(ParamValueText(c->params[1], 2), "2");
  EXPECT_EQ(ParamValueText(c->params[0], 0.05), "0.05");
}

TEST(SweepParametersTest, AliasesAndOverridesOfDottedEntries) {
  const std::string path =
      Sweep("p2.yaml",
            "  train.lr: {distribution: log_uniform, min: 1.0e-5, max: 1.0e-3}\n"
            "  train.batch_size: {values: [32, 16]}\n"
            "  train.weight_decay: {distribution: uniform, min: 0.0, max: 0.1}\n");
  auto c = LoadSweepConfigInProcess(path, {"parameters.train.weight_decay.max=0.2", "method=grid"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->lr.max, 1e-3);
  EXPECT_EQ(c->batch_sizes, (std::vector<int64_t>{16, 32}));
  ASSERT_EQ(c->params.size(), 1u);
  EXPECT_EQ(c->params[0].max, 0.2);
  EXPECT_EQ(c->method, "grid");  // W&B's top-level method
}

struct Bad {
  std::string parameters;  // after kLrBatch (lines 5-6), from line 7
  std::string message;     // after "FILE:"
};

class SweepParametersBadTest : public ::testing::TestWithParam<Bad> {};

TEST_P(SweepParametersBadTest, OneLineNamingFileLineAndKey) {
  const std::string path = Sweep("bad_params.yaml", kLrBatch + GetParam().parameters);
  auto c = LoadSweepConfigInProcess(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(std::string(c.status().message()), path + ":" + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Mistakes, SweepParametersBadTest,
    ::testing::Values(
        Bad{"  weight_decy: {values: [0.0]}\n",
            "7: parameters.weight_decy: is not a trainer key (the trainer reads model.path, "
            "model.kind, model.num_labels, model.pooling, model.include_prompt, "
            "model.max_seq_len, model.dropout, model.head, task.type, task.loss, "
            "task.train, task.eval, task.format, task.columns, task.label_column, "
            "task.prompts, task.eval_kind, task.eval_queries, task.eval_corpus, task.eval_qrels, "
            "task.num_labels, task.mnrl_gather, task.matryoshka_dims, task.matryoshka_weights, "
            "train.epochs, train.max_steps, train.batch_size, train.lr, train.weight_decay, "
            "train.warmup_ratio, train.schedule, train.max_grad_norm, train.grad_accum, "
            "train.precision, train.seed, train.shuffle, train.group_by_length, "
            "train.batch_sampler, train.multi_dataset_sampler, train.grad_checkpointing, "
            "train.cuda_graphs, "
            "train.length_buckets, "
            "train.eval_every_steps, train.eval_every_samples, "
            "train.eval_every_epochs, train.eval_batch_size, train.log_every_steps, "
            "train.ddp_bucket_mb, train.ddp_timeout_s, train.ddp_comm_dtype, train.strategy, "
            "train.devices, "
            "output.dir, output.save, output.checkpoint, output.checkpoint_every_s)"},
        Bad{"  train: {weight_decay: {distribution: normal, min: 0, max: 1}}\n",
            "7: parameters.train.weight_decay.distribution: expected one of log_uniform, "
            "uniform, int, log_uniform_values, int_uniform; got 'normal'"},
        Bad{"  train.weight_decay: {distribution: uniform, min: 0.1, max: 0.1}\n",
            "7: parameters.train.weight_decay.max: must be greater than min (0.1), got 0.1"},
        Bad{"  train.epochs: {distribution: int, min: 1.5, max: 3}\n",
            "7: parameters.train.epochs.min: expected an integer, got '1.5'"},
        Bad{"  dropout: {values: [0.1, 0.1]}\n",
            "7: parameters.dropout.values: 0.1 is listed twice"},
        Bad{"  dropout: {values: []}\n",
            "7: parameters.dropout.values: must list at least one value"},
        Bad{"  dropout: {values: [0.1], min: 0}\n",
            "7: parameters.dropout.values: give either values or distribution/min/max, not both"},
        Bad{"  output.dir: {values: [a, b]}\n",
            "7: parameters.output.dir: hpo gives each trial its own output.dir; it cannot be "
            "searched"},
        Bad{"  devices: {values: [1, 2]}\n",
            "7: parameters.devices: a trial's ranks come from resources.gpus_per_trial (the "
            "agents ignore train.devices); it cannot be searched"},
        Bad{"  eval_every_steps: {values: [10, 20]}\n",
            "7: parameters.eval_every_steps: hpo sets the evaluation cadence of every trial "
            "(trainer.evals_per_epoch); it cannot be searched"},
        Bad{"  weight_decay: 0.1\n",
            "7: parameters.weight_decay: expected a mapping: {distribution: ..., min: ..., max: "
            "...} or {values: [...]}"},
        Bad{"  train.lr: {values: [1.0e-4]}\n",
            "7: parameters.train.lr: lr is given twice (lr and train.lr)"},
        // Values the trainer refuses, quoted from the trainer's own check.
        Bad{"  dropout: {distribution: uniform, min: 0.5, max: 1.0}\n",
            "7: parameters.model.dropout: the trainer refuses model.dropout=1: model.dropout: must "
            "be in [0, 1), got 1"},
        Bad{"  train.epochs: {distribution: uniform, min: 1, max: 3}\n",
            "7: parameters.train.epochs: the trainer refuses train.epochs=1.74: train.epochs: "
            "expected an integer, got '1.74' (use distribution: int)"},
        Bad{"  model.pooling: {values: [mean, sum]}\n",
            "7: parameters.model.pooling: the trainer refuses model.pooling=sum: model.pooling: "
            "expected one of mean, cls, max; got 'sum'"}));

TEST(SweepParametersTest, AmbiguousLastPartIsAnError) {
  // No two trainer keys share a last part today; the rule is checked on the key list itself.
  std::map<std::string, int> last_parts;
  for (const std::string& key : trainer::TrainerConfigKeys()) {
    ++last_parts[key.substr(key.rfind('.') + 1)];
  }
  for (const auto& [part, count] : last_parts) {
    if (count > 1) {
      const std::string path =
          Sweep("ambiguous.yaml", std::string(kLrBatch) + "  " + part + ": {values: [1]}\n");
      EXPECT_THAT(std::string(LoadSweepConfigInProcess(path).status().message()),
                  HasSubstr("names several trainer keys"));
    }
  }
}

// hpo links no trainer: the trainer's dry run lists its keys, asked once more before the sweep's
// own dry run only where a parameter names a trainer key.
TEST(SweepParametersTest, TheTrainerIsAskedForItsKeysOnlyWhenANameNeedsThem) {
  int asked = 0;
  const AskTrainer counting = [&asked](const TrainerQuery& q) {
    ++asked;
    return InProcessTrainer()(q);
  };
  ASSERT_TRUE(LoadSweepConfig(Sweep("keys0.yaml", kLrBatch), {}, false, counting).ok());
  EXPECT_EQ(asked, 1);
  asked = 0;
  auto c = LoadSweepConfig(
      Sweep("keys1.yaml", std::string(kLrBatch) + "  dropout: {values: [0.0, 0.1]}\n"
                                                  "  weight_decay: {values: [0.0, 0.1]}\n"),
      {}, false, counting);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(c->params[1].name, "train.weight_decay");
}

TEST(SweepParametersTest, TheSyntheticTrainerTakesOnlyLrAndBatch) {
  const std::string path =
      WriteFile("synthetic_params.yaml",
                "name: s\nmetric: {name: m}\ntrainer: {synthetic: {steps: 3}}\nparameters:\n" +
                    std::string(kLrBatch) + "  weight_decay: {values: [0.0]}\n");
  EXPECT_EQ(std::string(LoadSweepConfigInProcess(path).status().message()),
            path +
                ":5: parameters: the synthetic trainer takes only lr and batch_size, not "
                "weight_decay");  // as written: no trainer to ask for its keys
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
