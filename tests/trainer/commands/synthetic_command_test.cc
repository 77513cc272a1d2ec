// `trainer synthetic`'s command line (trainer/commands/synthetic_command.h): each bad flag is one
// line on stderr and exit 2; a standalone run (no agent in the environment) prints one JSON line
// a step on stdout, the values of trainer/data/synthetic.h's formula, and exits 0.
#include "trainer/commands/synthetic_command.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/data/synthetic.h"

namespace tunefleet {
namespace trainer {
namespace {

TEST(SyntheticCommandTest, BadFlagsExitTwoInOneLine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--steps", "-1"},
                                             {"--seconds_per_step", "-0.5"},
                                             {"--noise", "-1"},
                                             {"--lr_effective", "0"},
                                             {"--batch_size", "0"},
                                             {"--samples_per_step", "0"},
                                             {"--steps", "many"},
                                             {"--no_such_flag"}}) {
    ::testing::internal::CaptureStderr();
    const int rc = RunSyntheticCommand(args);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, 2) << args[0];
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_THAT(err, ::testing::HasSubstr("trainer synthetic")) << err;
  }
}

TEST(SyntheticCommandTest, StandaloneRunPrintsEachStep) {
  ::unsetenv("TUNEFLEET_AGENT_ENDPOINT");
  ::testing::internal::CaptureStdout();
  const int rc = RunSyntheticCommand({"--steps", "3", "--lr_effective", "1e-3", "--batch_size",
                                      "16", "--samples_per_step", "10", "--metric", "m"});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  std::istringstream lines(out);
  SyntheticOptions o;
  o.lr_effective = 1e-3;
  o.batch_size = 16;
  o.samples_per_step = 10;
  int64_t step = 0;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ++step;
    EXPECT_EQ(j.at("step").get<int64_t>(), step) << line;
    EXPECT_EQ(j.at("samples").get<int64_t>(), step * 10) << line;
    EXPECT_DOUBLE_EQ(j.at("m").get<double>(), SyntheticValue(o, step)) << line;
  }
  EXPECT_EQ(step, 3) << out;
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
