// What a trial may ask of an agent: which of its variables reach the trainer (never LD_*),
// and which folders its logs and outputs may lie in (inside the served folders, owned by the
// agent's user, links resolved).
#include "launcher/trial_guard.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

using ::testing::HasSubstr;

TEST(TrialGuardTest, OnlyTheTrainingFamiliesAndNamedVariablesPass) {
  std::vector<std::string> dropped;
  const auto kept = FilterTrialEnv({{"NCCL_DEBUG", "INFO"},
                                    {"CUDA_LAUNCH_BLOCKING", "1"},
                                    {"OMP_NUM_THREADS", "2"},
                                    {"GLOO_SOCKET_IFNAME", "eth0"},
                                    {"TUNEFLEET_X", "1"},
                                    {"MY_FLAG", "1"},
                                    {"LD_PRELOAD", "/tmp/evil.so"},
                                    {"LD_LIBRARY_PATH", "/tmp"},
                                    {"CUDA_VISIBLE_DEVICES", "3"},
                                    {"PATH", "/tmp/bin"},
                                    {"PYTHONPATH", "/tmp"}},
                                   {"MY_FLAG", "LD_PRELOAD"}, &dropped);
  EXPECT_EQ(kept, (std::map<std::string, std::string>{{"CUDA_LAUNCH_BLOCKING", "1"},
                                                      {"GLOO_SOCKET_IFNAME", "eth0"},
                                                      {"MY_FLAG", "1"},
                                                      {"NCCL_DEBUG", "INFO"},
                                                      {"OMP_NUM_THREADS", "2"},
                                                      {"TUNEFLEET_X", "1"}}));
  // LD_PRELOAD is dropped even though it was named.
  EXPECT_EQ(dropped, (std::vector<std::string>{"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
                                               "LD_PRELOAD", "PATH", "PYTHONPATH"}));
}

TEST(TrialGuardTest, PathsMustLieInServedFoldersOfOurs) {
  char tmpl[] = "/tmp/tf-guard-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  ASSERT_EQ(::mkdir((root + "/served").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/elsewhere").c_str(), 0755), 0);
  const std::vector<std::string> roots = {root + "/served"};
  EXPECT_TRUE(CheckTrialPath("log_dir", root + "/served/sweep/logs", roots).ok());
  EXPECT_TRUE(CheckTrialPath("log_dir", root + "/served", roots).ok());
  EXPECT_THAT(std::string(CheckTrialPath("log_dir", root + "/elsewhere/logs", roots).message()),
              HasSubstr("lies outside the folders this agent serves"));
  EXPECT_THAT(std::string(CheckTrialPath("log_dir", root + "/served/../elsewhere", roots).message()),
              HasSubstr("lies outside"));
  EXPECT_THAT(std::string(CheckTrialPath("log_dir", "relative/logs", roots).message()),
              HasSubstr("is not an absolute path"));
  // A link inside the served folder that leads out of it.
  ASSERT_EQ(::symlink((root + "/elsewhere").c_str(), (root + "/served/out").c_str()), 0);
  EXPECT_THAT(std::string(CheckTrialPath("fetch_back", root + "/served/out/model", roots).message()),
              HasSubstr("lies outside"));
  // Another user's folder inside the served one (root can make one).
  if (::geteuid() == 0) {
    const std::string theirs = root + "/served/theirs";
    ASSERT_EQ(::mkdir(theirs.c_str(), 0777), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_THAT(std::string(CheckTrialPath("log_dir", theirs + "/logs", roots).message()),
                HasSubstr("belongs to uid 65534"));
  }
  std::system(("rm -rf " + root).c_str());
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
