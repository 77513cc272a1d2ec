// The words hpo's hints start with (hpo/invocation.h): `bazel run //hpo --` under bazel run,
// else argv[0] as the user typed it, quoted for the shell.
#include "hpo/invocation.h"

#include <stdlib.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(HpoInvocationTest, UnderBazelRunTheHintIsBazelRun) {
  EXPECT_EQ(HpoInvocation("/root/.cache/bazel/x/execroot/tunefleet/bazel-out/bin/hpo/hpo",
                          "/home/me/tunefleet"),
            "bazel run //hpo --");
}

TEST(HpoInvocationTest, ElseArgvZeroAsTyped) {
  EXPECT_EQ(HpoInvocation("hpo", nullptr), "hpo");  // found on PATH
  EXPECT_EQ(HpoInvocation("hpo", ""), "hpo");       // an empty workspace is no bazel run
  EXPECT_EQ(HpoInvocation("./bazel-bin/hpo/hpo", nullptr), "./bazel-bin/hpo/hpo");
  EXPECT_EQ(HpoInvocation("/opt/my tools/hpo", nullptr), "'/opt/my tools/hpo'");
  EXPECT_EQ(HpoInvocation("", nullptr), "hpo");
}

TEST(HpoInvocationTest, ThisProcess) {
  ::unsetenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string self = HpoInvocation();
  EXPECT_NE(self.find("invocation_test"), std::string::npos) << self;  // this test's argv[0]
  ::setenv("BUILD_WORKSPACE_DIRECTORY", "/home/me/tunefleet", 1);
  EXPECT_EQ(HpoInvocation(), "bazel run //hpo --");
  ::unsetenv("BUILD_WORKSPACE_DIRECTORY");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
