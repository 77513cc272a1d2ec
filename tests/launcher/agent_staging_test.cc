// launcher/agent/agent_staging.h: how the trainer's arguments are pointed at the local copies of
// staged paths. (The fetch itself: tests/comm/bulk_transfer_test and
// tests/integration/staging_trial_test; the head's host: comm::EndpointHost in endpoint_test.)
#include "launcher/agent/agent_staging.h"

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
  EXPECT_EQ(RewriteStaged("model.path=/models/bert/vocab.txt", local), "model.path=/models/bert/vocab.txt");
  EXPECT_EQ(RewriteStaged("train.lr=0.001", local), "train.lr=0.001");
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
