// launcher/head/head_options.h: HeadOptions::FromFlags' one-line errors, in the order the head
// checks them, with the wording the CLI tests expect; the defaults it fills in (the private
// runtime folder's socket and logs); --gen_keys alone; the backend found by name; every
// registered backend's own flags on the command line with their defaults.
#include "launcher/head/head_options.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/cli.h"
#include "gtest/gtest.h"
#include "launcher/backends/backend_registry.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

// Flags that pass: a private socket and logs given, no agent to find.
HeadFlags Good() {
  HeadFlags f;
  f.bind = "ipc:///tmp/tf-head-options-test.sock";
  f.log_dir = "/tmp/tf-head-options-test-logs";
  f.start_agents = "none";
  return f;
}

std::string Error(const HeadFlags& f) {
  absl::StatusOr<HeadOptions> o = HeadOptions::FromFlags(f);
  EXPECT_FALSE(o.ok());
  if (o.ok()) return "";
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument) << o.status();
  return std::string(o.status().message());
}

TEST(HeadOptions, GoodFlags) {
  HeadFlags f = Good();
  f.start_agents = "ssh";
  f.agent_binary = "/opt/tunefleet/agent";
  f.heartbeat_ms = 250;
  f.agent_timeout_ms = 4000;
  f.slots = 2;
  f.bind = "tcp://localhost:0";
  f.insecure = true;
  absl::StatusOr<HeadOptions> o = HeadOptions::FromFlags(f);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->backend->name(), "ssh");
  EXPECT_EQ(o->bind, "tcp://127.0.0.1:0");  // as parsed
  EXPECT_EQ(o->agent_binary, "/opt/tunefleet/agent");
  EXPECT_EQ(o->heartbeat_interval, absl::Milliseconds(250));
  EXPECT_EQ(o->agent_timeout, absl::Seconds(4));
  EXPECT_EQ(o->slots, 2);
  EXPECT_EQ(o->backend_flags.at("remote_shell"), "ssh -o BatchMode=yes {host}");
  EXPECT_TRUE(o->gen_keys.empty());
}

TEST(HeadOptions, DefaultsInThePrivateRuntimeFolder) {
  ShortTempDir runtime("hopt");
  ::setenv("XDG_RUNTIME_DIR", runtime.path().c_str(), 1);
  HeadFlags f = Good();
  f.bind.clear();
  f.log_dir.clear();
  absl::StatusOr<HeadOptions> o = HeadOptions::FromFlags(f);
  ::unsetenv("XDG_RUNTIME_DIR");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->bind, "ipc://" + runtime.path() + "/tunefleet/head/head.sock");
  EXPECT_EQ(o->log_dir, runtime.path() + "/tunefleet/head");
  EXPECT_FALSE(o->backend->starts_agents());
  EXPECT_TRUE(o->agent_binary.empty());  // none starts no agent: none is looked for
}

TEST(HeadOptions, GenKeysAloneChecksNothingElse) {
  HeadFlags f = Good();
  f.gen_keys = "/tmp/keys";
  f.start_agents = "no-such-backend";
  f.heartbeat_ms = 0;
  absl::StatusOr<HeadOptions> o = HeadOptions::FromFlags(f);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->gen_keys, "/tmp/keys");
  EXPECT_EQ(o->backend, nullptr);
}

TEST(HeadOptions, OneLineErrorsInOrder) {
  HeadFlags f = Good();
  f.bind = "tcp://127.0.0.1:0";
  f.start_agents = "kubernetes";  // the bind is checked first
  EXPECT_EQ(Error(f),
            "--bind tcp://127.0.0.1:0 takes connections from every user of this host: give --keys "
            "DIR (see --gen_keys), leave --bind out (a private Unix socket), or --insecure");
  f.bind = "tcp://127.0.0.1:99999";
  EXPECT_TRUE(absl::StrContains(Error(f), "port 99999 is out of range")) << Error(f);
  EXPECT_TRUE(absl::StartsWith(Error(f), "--bind: ")) << Error(f);

  f = Good();
  f.start_agents = "kubernetes";
  EXPECT_TRUE(absl::StartsWith(Error(f), "--start_agents must be ssh, slurm, none")) << Error(f);
  EXPECT_TRUE(absl::EndsWith(Error(f), ", got 'kubernetes'")) << Error(f);
  f.start_agents = "slurm";
  f.nodes = "hosts.txt";
  EXPECT_EQ(Error(f),
            "--nodes with --start_agents slurm: the hosts are the allocation's nodes "
            "(SLURM_JOB_NODELIST); pick some with --include or --exclude");

  f = Good();
  f.slots = 5000;
  EXPECT_EQ(Error(f), "--slots must be between 1 and 4096, got 5000");
  f.slots = -1;
  EXPECT_EQ(Error(f), "--slots must be between 1 and 4096, got -1");
  f = Good();
  f.backend_flags["remote_shell"] = "ssh";
  EXPECT_EQ(Error(f), "--remote_shell must contain {host}");
  f = Good();
  f.heartbeat_ms = 0;
  EXPECT_EQ(Error(f), "--heartbeat_ms must be between 1 and 3600000, got 0");
  f.heartbeat_ms = 3600 * 1000 + 1;
  EXPECT_EQ(Error(f), "--heartbeat_ms must be between 1 and 3600000, got 3600001");
  f = Good();
  f.agent_timeout_ms = 0;
  EXPECT_EQ(Error(f), "--agent_timeout_ms must be >= 1");
}

// Each backend's flags (launcher/backends/backend_registry.h): on the head's command line with
// their defaults and help, and in HeadOptions::backend_flags, given or not.
TEST(HeadOptions, EveryBackendsFlagsAreTheHeads) {
  const std::vector<BackendFlag> backend_flags = AllBackendFlags();
  ASSERT_FALSE(backend_flags.empty());
  HeadFlags f;
  CommandLine cli("head", "", "");
  AddHeadFlags(&cli, &f);
  const std::string help = cli.Help();
  std::vector<std::string> args;
  for (const BackendFlag& flag : backend_flags) {
    EXPECT_EQ(f.backend_flags.at(flag.name), flag.default_value) << flag.name;
    EXPECT_TRUE(absl::StrContains(help, "--" + flag.name + "=" + flag.value_name)) << help;
    EXPECT_TRUE(absl::StrContains(help, flag.help)) << help;
    args.push_back("--" + flag.name + "=" + flag.default_value + " {host}");
  }
  ASSERT_TRUE(cli.Parse(args).ok());
  HeadFlags good = Good();
  good.backend_flags = f.backend_flags;
  absl::StatusOr<HeadOptions> o = HeadOptions::FromFlags(good);
  ASSERT_TRUE(o.ok()) << o.status();
  for (const BackendFlag& flag : backend_flags) {
    EXPECT_EQ(o->backend_flags.at(flag.name), flag.default_value + " {host}") << flag.name;
  }
  o = HeadOptions::FromFlags(Good());  // none given: the defaults
  ASSERT_TRUE(o.ok()) << o.status();
  for (const BackendFlag& flag : backend_flags) {
    EXPECT_EQ(o->backend_flags.at(flag.name), flag.default_value) << flag.name;
  }
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
