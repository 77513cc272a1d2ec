// What a trial may ask of an agent: which of its variables reach the trainer (never LD_*),
// and which folders its logs and outputs may lie in (inside the served folders, owned by the
// agent's user, links resolved).
#include "launcher/agent/trial_guard.h"

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

TEST(TrialGuardTest, OnlyNamedTrainingVariablesAndAllowedOnesPass) {
  std::vector<std::string> dropped;
  const auto kept = FilterTrialEnv(
      {{"NCCL_DEBUG", "INFO"},
       {"NCCL_SOCKET_IFNAME", "eth0"},
       {"CUDA_LAUNCH_BLOCKING", "1"},
       {"OMP_NUM_THREADS", "2"},
       {"GLOO_SOCKET_IFNAME", "eth0"},
       {"TUNEFLEET_LOG_LEVEL", "1"},
       {"MY_FLAG", "1"},
       // Not in the list: only when named.
       {"NCCL_FUTURE_KNOB", "1"},
       {"CUDA_VISIBLE_DEVICES", "3"},
       {"PATH", "/tmp/bin"},
       // Never, named or not (issue 32's finding and its kin).
       {"LD_PRELOAD", "/tmp/evil.so"},
       {"LD_LIBRARY_PATH", "/tmp"},
       {"TUNEFLEET_BIN_DIR", "/tmp/bin"},
       {"TUNEFLEET_AGENT_ENDPOINT", "ipc:///tmp/x"},
       // The agent's own since TrialSpec.params_json.
       {"TUNEFLEET_HPARAMS", "{}"},
       {"TUNEFLEET_PARAMS", "{}"},
       {"CUDA_INJECTION64_PATH", "/tmp/evil.so"},
       {"NCCL_NET_PLUGIN", "evil"},
       {"NCCL_TUNER_PLUGIN", "evil"},
       {"OMP_TOOL_LIBRARIES", "/tmp/evil.so"},
       {"GCONV_PATH", "/tmp"},
       {"GLIBC_TUNABLES", "x"}},
      {"MY_FLAG", "LD_PRELOAD", "TUNEFLEET_BIN_DIR", "NCCL_NET_PLUGIN", "CUDA_INJECTION64_PATH"},
      &dropped);
  EXPECT_EQ(kept, (std::map<std::string, std::string>{{"CUDA_LAUNCH_BLOCKING", "1"},
                                                      {"GLOO_SOCKET_IFNAME", "eth0"},
                                                      {"MY_FLAG", "1"},
                                                      {"NCCL_DEBUG", "INFO"},
                                                      {"NCCL_SOCKET_IFNAME", "eth0"},
                                                      {"OMP_NUM_THREADS", "2"},
                                                      {"TUNEFLEET_LOG_LEVEL", "1"}}));
  EXPECT_EQ(dropped,
            (std::vector<std::string>{
                "CUDA_INJECTION64_PATH", "CUDA_VISIBLE_DEVICES", "GCONV_PATH", "GLIBC_TUNABLES",
                "LD_LIBRARY_PATH", "LD_PRELOAD", "NCCL_FUTURE_KNOB", "NCCL_NET_PLUGIN",
                "NCCL_TUNER_PLUGIN", "OMP_TOOL_LIBRARIES", "PATH", "TUNEFLEET_AGENT_ENDPOINT",
                "TUNEFLEET_BIN_DIR", "TUNEFLEET_HPARAMS", "TUNEFLEET_PARAMS"}));
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
  EXPECT_THAT(
      std::string(CheckTrialPath("log_dir", root + "/served/../elsewhere", roots).message()),
      HasSubstr("lies outside"));
  EXPECT_THAT(std::string(CheckTrialPath("log_dir", "relative/logs", roots).message()),
              HasSubstr("is not an absolute path"));
  // A link inside the served folder that leads out of it.
  ASSERT_EQ(::symlink((root + "/elsewhere").c_str(), (root + "/served/out").c_str()), 0);
  EXPECT_THAT(
      std::string(CheckTrialPath("fetch_back", root + "/served/out/model", roots).message()),
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
