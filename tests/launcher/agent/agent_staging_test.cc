// launcher/agent/agent_staging.h: how the trainer's arguments are pointed at the local copies of
// staged paths. (The fetch itself: tests/comm/bulk_transfer_test and
// tests/integration/staging_trial_test; the head's host: comm::EndpointHost in endpoint_test.)
#include "launcher/agent/agent_staging.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

TEST(AgentStaging, RewritesOnlyWholePathsAndKeyEqualsPath) {
  const std::map<std::string, std::string> local = {{"/data/train.csv", "/cache/ab12"},
                                                    {"/models/bert", "/cache/cd34"}};
  EXPECT_EQ(RewriteStaged("/data/train.csv", local), "/cache/ab12");
  EXPECT_EQ(RewriteStaged("task.train=/data/train.csv", local), "task.train=/cache/ab12");
  EXPECT_EQ(RewriteStaged("model.path=/models/bert", local), "model.path=/cache/cd34");
  // Not the path itself: a longer path, a suffix without '=', another argument.
  EXPECT_EQ(RewriteStaged("/data/train.csv.bak", local), "/data/train.csv.bak");
  EXPECT_EQ(RewriteStaged("x/data/train.csv", local), "x/data/train.csv");
  EXPECT_EQ(RewriteStaged("model.path=/models/bert/vocab.txt", local),
            "model.path=/models/bert/vocab.txt");
  EXPECT_EQ(RewriteStaged("train.lr=0.001", local), "train.lr=0.001");
}

// A trial's argv and its typed string overrides name the local copies; nothing else changes.
TEST(AgentStaging, RewritesTheTrialsArgvAndStringOverrides) {
  const std::map<std::string, std::string> local = {{"/data/train.csv", "/cache/ab12"},
                                                    {"/models/bert", "/cache/cd34"}};
  comm::TrialSpec spec;
  for (const char* a : {"train", "--config", "/data/train.csv"}) spec.add_argv(a);
  comm::TrainerOverride* model = spec.add_overrides();
  model->set_key("model.path");
  model->set_string_value("/models/bert");
  comm::TrainerOverride* other = spec.add_overrides();
  other->set_key("model.pooling");
  other->set_string_value("/models/bert/x");
  comm::TrainerOverride* number = spec.add_overrides();
  number->set_key("train.lr");
  number->set_double_value(1e-3);
  EXPECT_EQ(RewriteStagedTrial(local, &spec),
            (std::vector<std::string>{"/cache/ab12", "model.path=/cache/cd34"}));
  EXPECT_EQ(spec.argv(2), "/cache/ab12");
  EXPECT_EQ(spec.overrides(0).string_value(), "/cache/cd34");
  EXPECT_EQ(spec.overrides(1).string_value(), "/models/bert/x");
  EXPECT_EQ(spec.overrides(2).double_value(), 1e-3);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
