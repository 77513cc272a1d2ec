#include "common/logging.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(LoggingTest, ContextPrefix) {
  SetLogRole("agent");
  SetLogTrial(-1);
  SetLogRank(-1);
  EXPECT_EQ(LogContextPrefix(), "agent");
  SetLogTrial(7);
  SetLogRank(1);
  EXPECT_EQ(LogContextPrefix(), "agent trial=7 rank=1");
  SetLogRole("");
  SetLogTrial(-1);
  EXPECT_EQ(LogContextPrefix(), "rank=1");
  SetLogRank(-1);
}

TEST(LoggingTest, LineCarriesContextAndLevelFilters) {
  SetLogRole("head");
  SetLogTrial(3);
  SetMinLogLevel(LogLevel::kINFO);
  ::testing::internal::CaptureStderr();
  TF_LOG(INFO) << "hello " << 42;
  TF_LOG(DEBUG) << "hidden";
  std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(out[0], 'I');
  EXPECT_NE(out.find("head trial=3 logging_test.cc:"), std::string::npos) << out;
  EXPECT_NE(out.find("] hello 42\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("hidden"), std::string::npos);
  SetLogTrial(-1);
}

TEST(LoggingTest, ParseLevel) {
  LogLevel level;
  EXPECT_TRUE(ParseLogLevel("warning", &level));
  EXPECT_EQ(level, LogLevel::kWARNING);
  EXPECT_FALSE(ParseLogLevel("loud", &level));
}

TEST(LoggingDeathTest, CheckAborts) {
  EXPECT_DEATH(TF_CHECK(1 + 1 == 3) << "math", "Check failed: 1 \\+ 1 == 3 math");
}

}  // namespace
}  // namespace tunefleet
