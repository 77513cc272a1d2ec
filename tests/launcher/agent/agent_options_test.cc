// launcher/agent/agent_options.h: AgentOptions::FromFlags' one-line errors, in the order the
// agent checks them, with the wording the CLI tests expect (tests/integration/cli_test.sh,
// bad_input_test.sh); the values it fills in; --runtime_dir made private or refused.
#include "launcher/agent/agent_options.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

// Flags that pass: a head, a trainer that exists.
AgentFlags Good() {
  AgentFlags f;
  f.head = "tcp://127.0.0.1:5555";
  f.trainer = "/bin/true";
  return f;
}

std::string Error(const AgentFlags& f) {
  absl::StatusOr<AgentOptions> o = AgentOptions::FromFlags(f);
  EXPECT_FALSE(o.ok());
  return o.ok() ? "" : std::string(o.status().message());
}

TEST(AgentOptions, GoodFlags) {
  AgentFlags f = Good();
  f.name = "gpu-1";
  f.slots = 2;
  f.gpu_ids = "0,2";
  f.allow_env = "MY_FLAG,OTHER";
  f.allow_dirs = "/data,/scratch";
  f.kill_grace_ms = 1500;
  f.head_grace_s = 60;
  f.detach = true;
  absl::StatusOr<AgentOptions> o = AgentOptions::FromFlags(f);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->head, "tcp://127.0.0.1:5555");
  EXPECT_EQ(o->name, "gpu-1");
  EXPECT_EQ(o->trainer, "/bin/true");
  EXPECT_EQ(o->slots, 2);
  EXPECT_EQ(o->gpu_ids, (std::vector<int>{0, 2}));
  EXPECT_TRUE(o->exclude_gpu_ids.empty());
  EXPECT_EQ(o->allow_env, (std::set<std::string>{"MY_FLAG", "OTHER"}));
  EXPECT_EQ(o->allow_dirs, (std::vector<std::string>{"/data", "/scratch"}));
  EXPECT_EQ(o->kill_grace, absl::Milliseconds(1500));
  EXPECT_EQ(o->head_grace, absl::Minutes(1));
  EXPECT_TRUE(o->detach);
  EXPECT_TRUE(o->runtime_dir.empty());  // RUNTIME/agent-NAME, made at start-up
  EXPECT_TRUE(o->programs);             // program trials run unless --noprograms
  f.programs = false;
  EXPECT_FALSE(AgentOptions::FromFlags(f)->programs);
}

TEST(AgentOptions, NameDefaultsToTheHostName) {
  absl::StatusOr<AgentOptions> o = AgentOptions::FromFlags(Good());
  ASSERT_TRUE(o.ok()) << o.status();
  char host[256] = {0};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  EXPECT_TRUE(o->name == host || o->name == "local") << o->name;
}

TEST(AgentOptions, OneLineErrorsInOrder) {
  AgentFlags f = Good();
  f.head.clear();
  f.slots = -1;  // the head is checked first
  EXPECT_EQ(Error(f), "--head is required");
  f = Good();
  f.head = "tcp://127.0.0.1:99999";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--head: ")) << Error(f);
  EXPECT_TRUE(absl::StrContains(Error(f), "port 99999 is out of range")) << Error(f);

  f = Good();
  f.name = "../../x y";
  EXPECT_EQ(Error(f), "--name '../../x y': 1-64 letters, digits, '.', '-' or '_'");
  f.name = std::string(70, 'n') + "/";
  EXPECT_EQ(Error(f),
            "--name '" + std::string(64, 'n') + "...': 1-64 letters, digits, '.', '-' or '_'");

  f = Good();
  f.allow_env = "MY_FLAG,TUNEFLEET_BIN_DIR";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--allow_env: TUNEFLEET_BIN_DIR says which program"))
      << Error(f);
  f.allow_env = "NCCL_NET_PLUGIN";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--allow_env: NCCL_NET_PLUGIN loads code")) << Error(f);
  EXPECT_TRUE(absl::EndsWith(Error(f), ": it never passes (docs/CONFIG.md, resources.env)"))
      << Error(f);

  f = Good();
  f.slots = 100000000;
  EXPECT_EQ(Error(f), "--slots must be between 0 and 4096, got 100000000");
  f = Good();
  f.prewarm_workers = -1;
  EXPECT_EQ(Error(f), "--prewarm_workers must be between 0 and 4096, got -1");
  f = Good();
  f.kill_grace_ms = -1;
  EXPECT_EQ(Error(f), "--kill_grace_ms must be between 0 and 600000 (10 minutes), got -1");
  f = Good();
  f.trainer = "/nonexistent";
  EXPECT_EQ(Error(f), "--trainer /nonexistent: No such file or directory");
  f.trainer = "/tmp";
  EXPECT_EQ(Error(f), "--trainer /tmp: not an executable file");
  f = Good();
  f.gpu_ids = "0";
  f.exclude_gpu_ids = "1";
  EXPECT_EQ(Error(f), "--gpu_ids and --exclude_gpu_ids: give one or the other");
  f.exclude_gpu_ids.clear();
  f.gpu_ids = "zero";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--gpu_ids")) << Error(f);
  f = Good();
  f.exclude_gpu_ids = "-3";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--exclude_gpu_ids")) << Error(f);
  f = Good();
  f.head_grace_s = 90000;
  EXPECT_EQ(Error(f), "--head_grace_s must be between 0 and 86400 (a day), got 90000");
  f = Good();
  f.keys = "/nonexistent/keys";
  EXPECT_TRUE(absl::StrContains(Error(f), "/nonexistent/keys")) << Error(f);
}

TEST(AgentOptions, RuntimeDirMadePrivateOrRefused) {
  ShortTempDir tmp("aopt");
  AgentFlags f = Good();
  f.runtime_dir = tmp.path() + "/agent";
  absl::StatusOr<AgentOptions> o = AgentOptions::FromFlags(f);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->runtime_dir, tmp.path() + "/agent");
  struct stat st;
  ASSERT_EQ(::stat(o->runtime_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // A link is refused, naming the flag.
  ASSERT_EQ(::symlink(o->runtime_dir.c_str(), (tmp.path() + "/link").c_str()), 0);
  f.runtime_dir = tmp.path() + "/link";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--runtime_dir: ")) << Error(f);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
