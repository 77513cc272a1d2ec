// hpo/trial_command.h: the hyperparameters a trial hands its trainer for TensorBoard's HParams
// view (TUNEFLEET_HPARAMS): every searched parameter, numbers as numbers and a categorical of
// strings by its label, and lr_effective; the text is JSON that reads back to the same values.
#include "hpo/trial_command.h"

#include <string>

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

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
