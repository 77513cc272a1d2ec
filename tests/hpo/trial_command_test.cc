// hpo/trial_command.h: the trainer command a trial's TrialSpec holds (argv, then typed
// overrides: a label stays a string whatever it looks like, whole categorical numbers and `int`
// keys are integers), and the hyperparameters a trial hands its trainer for TensorBoard's HParams
// view (TUNEFLEET_HPARAMS): every searched parameter, numbers as numbers and a categorical of
// strings by its label, and lr_effective; the text is JSON that reads back to the same values.
#include "hpo/trial_command.h"

#include <string>
#include <vector>

#include "comm/trainer_overrides.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace hpo {
namespace {

TEST(TrialHParamsJson, EveryParameterAndTheEffectiveLr) {
  SweepConfig config;
  ParamSpec pooling;
  pooling.name = "model.pooling";
  pooling.distribution = "categorical";
  pooling.labels = {"mean", "cls"};
  ParamSpec decay;
  decay.name = "train.weight_decay";
  decay.distribution = "uniform";
  config.params = {pooling, decay};
  Trial t;
  t.params = {{"lr", 1e-4}, {"batch_size", 64}, {"model.pooling", 1}, {"train.weight_decay", 0.01}};
  t.lr_effective = 2e-4;
  const std::string text = TrialHParamsJson(config, t);
  const nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_EQ(j.size(), 5u) << text;
  EXPECT_EQ(j["lr"].get<double>(), 1e-4) << text;
  EXPECT_EQ(j["batch_size"].get<double>(), 64) << text;
  EXPECT_EQ(j["model.pooling"].get<std::string>(), "cls") << text;
  EXPECT_EQ(j["train.weight_decay"].get<double>(), 0.01) << text;
  EXPECT_EQ(j["lr_effective"].get<double>(), 2e-4) << text;
}

TEST(FillTrainerCommand, ArgvThenTypedOverrides) {
  SweepConfig config;
  config.trainer.config = "/c/train.yaml";
  config.trainer.overrides = {"train.epochs=2", "model.pooling='1e-3'", "train.devices=[0, 1]"};
  config.trainer.evals_per_epoch = 4;
  ParamSpec label;
  label.name = "task.format";
  label.distribution = "categorical";
  label.labels = {"stsb", "1e-3"};
  ParamSpec whole;
  whole.name = "train.epochs";
  whole.distribution = "categorical";
  whole.values = {1, 2};
  ParamSpec decay;
  decay.name = "train.weight_decay";
  decay.distribution = "uniform";
  ParamSpec layers;
  layers.name = "model.max_seq_len";
  layers.distribution = "int";
  config.params = {label, whole, decay, layers};
  Trial t;
  t.number = 7;
  t.params = {{"lr", 1e-4},        {"batch_size", 64},          {"task.format", 1},
              {"train.epochs", 2}, {"train.weight_decay", 2.0}, {"model.max_seq_len", 64}};
  t.lr_effective = 2e-4;
  comm::TrialSpec spec;
  FillTrainerCommand(config, t, "/runs/s", &spec);
  EXPECT_EQ(comm::TrainerArgv(spec),
            (std::vector<std::string>{
                "train", "--config", "/c/train.yaml", "train.epochs=2", "model.pooling=\"1e-3\"",
                "train.devices=[0, 1]", "train.eval_every_steps=0", "train.eval_every_samples=0",
                "train.eval_every_epochs=0.25", "task.format=\"1e-3\"", "train.epochs=2",
                "train.weight_decay=2.0", "model.max_seq_len=64", "train.lr=0.0002",
                "train.batch_size=64", "output.dir=/runs/s/trial-7"}));
  ASSERT_EQ(spec.overrides_size(), 13);
  EXPECT_EQ(spec.overrides(6).string_value(), "1e-3");  // the label, not a number
  EXPECT_EQ(spec.overrides(7).int_value(), 2);
  EXPECT_EQ(spec.overrides(8).double_value(), 2.0);
  EXPECT_EQ(spec.overrides(9).int_value(), 64);
  EXPECT_EQ(spec.overrides(10).double_value(), 2e-4);

  config.trainer.synthetic = true;
  config.metric_name = "loss";
  config.params.clear();
  FillTrainerCommand(config, t, "/runs/s", &spec);
  EXPECT_EQ(spec.overrides_size(), 0);
  EXPECT_EQ(spec.argv(0), "synthetic");
  EXPECT_EQ(spec.argv(spec.argv_size() - 1), "loss");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
