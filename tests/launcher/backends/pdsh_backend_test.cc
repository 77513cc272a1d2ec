// launcher/backends/pdsh_backend.h: registered as --start_agents pdsh; the pdsh command lines
// (DeepSpeed's -S -f 1024 -w, %h for the agent's name, one pdsh per set of hosts sharing their
// agent arguments), and, through AgentLauncher with Debian's pdsh and its exec module (the "remote"
// command runs here), each host's fate from pdsh's output: up, failed with its own last line, or
// left to register by itself when only another host's command failed; a missing pdsh fails every
// host.
#include "launcher/backends/pdsh_backend.h"

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "launcher/backends/agent_launcher.h"
#include "launcher/backends/backend_registry.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

LaunchSettings Settings() {
  LaunchSettings s;
  s.agent_binary = "/opt/tune fleet/agent";
  s.head_endpoint = "tcp://10.0.0.1:5555";
  s.log_dir = "/logs";
  return s;
}

TEST(PdshBackend, RegisteredAsPdsh) {
  absl::StatusOr<const LauncherBackend*> backend = FindBackend("pdsh");
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ(*backend, &PdshLauncherBackend());
  EXPECT_TRUE((*backend)->starts_agents());
  EXPECT_FALSE((*backend)->has_hosts());  // the hosts of --nodes
  EXPECT_TRUE((*backend)->CheckFlags(BackendFlags{"hosts.txt", "ipc:///x"}).ok());
}

TEST(PdshBackend, OnePdshPerSetOfAgentArguments) {
  LaunchSettings s = Settings();
  s.keys_dir = "/shared/keys";
  const PdshBackend pdsh("pdsh", "ssh");
  const std::vector<LaunchCommand> plan =
      pdsh.Plan(s, {HostEntry{"ubuntu@a", 2, 1}, HostEntry{"b", 4, 2}, HostEntry{"c", 2, 3}});
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].shell_command,
            "PDSH_RCMD_TYPE=ssh exec pdsh -S -f 1024 -w ubuntu@a,c '/opt/tune fleet/agent' --head "
            "tcp://10.0.0.1:5555 --name %h --detach --slots 2 --keys /shared/keys");
  EXPECT_EQ(plan[0].hosts, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(plan[0].log_path, "/logs/pdsh.log");
  EXPECT_EQ(plan[0].host_logs, (std::vector<std::string>{"/logs/pdsh.log", "/logs/pdsh.log"}));
  EXPECT_EQ(plan[1].shell_command,
            "PDSH_RCMD_TYPE=ssh exec pdsh -S -f 1024 -w b '/opt/tune fleet/agent' --head "
            "tcp://10.0.0.1:5555 --name %h --detach --slots 4 --keys /shared/keys");
  EXPECT_EQ(plan[1].hosts, (std::vector<size_t>{1}));
  EXPECT_EQ(plan[1].log_path, "/logs/pdsh-2.log");
  EXPECT_EQ(plan[0].start_line, "starting the agents of 2 host(s) through pdsh");
}

TEST(PdshBackend, RcmdFromTheEnvironmentElseSsh) {
  const PdshBackend pdsh;  // as the registry's
  ::unsetenv("PDSH_RCMD_TYPE");
  EXPECT_TRUE(absl::StartsWith(pdsh.Command(Settings(), {HostEntry{"a", 0, 1}}),
                               "PDSH_RCMD_TYPE=ssh exec pdsh -S -f 1024 -w a "));
  ::setenv("PDSH_RCMD_TYPE", "exec", 1);
  EXPECT_TRUE(absl::StartsWith(pdsh.Command(Settings(), {HostEntry{"a", 0, 1}}),
                               "PDSH_RCMD_TYPE=exec exec pdsh -S -f 1024 -w a "));
  ::unsetenv("PDSH_RCMD_TYPE");
}

void PollUntil(AgentLauncher& l, const absl::flat_hash_set<std::string>& up,
               const std::function<bool()>& done) {
  for (int i = 0; i < 400 && !done(); ++i) {
    l.Poll(absl::Now(), up);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A fake agent run by pdsh's exec module: `--head EP --name HOST --detach`. Host ok exits 0 as a
// detached agent does, bad fails as an agent with a bad flag, mute exits 0 after a while.
TEST(PdshBackend, HostsFateFromPdshOutput) {
  LaunchSettings s = Settings();
  s.log_dir = FreshTestDir("pdsh_fate");
  s.agent_binary = s.log_dir + "/fake-agent";
  ASSERT_EQ(std::system(
                ("printf '%s\\n' '#!/bin/sh' "
                 "'case \"$4\" in bad) echo \"agent: error: --gpu_ids 3: no GPU 3\" >&2; exit 2;; "
                 "mute) sleep 0.5;; esac' 'exit 0' > " +
                 s.agent_binary + " && chmod +x " + s.agent_binary)
                    .c_str()),
            0);
  const PdshBackend pdsh("pdsh", "exec");
  AgentLauncher l(pdsh, s, absl::Milliseconds(200),
                  {HostEntry{"ok", 0, 1}, HostEntry{"bad", 0, 2}, HostEntry{"mute", 0, 3}});
  l.Start(absl::Now());
  PollUntil(l, {"ok"}, [&] { return l.status()[1].state == AgentLauncher::State::kFailed; });
  const auto& st = l.status();
  EXPECT_EQ(st[0].state, AgentLauncher::State::kUp);
  ASSERT_EQ(st[1].state, AgentLauncher::State::kFailed) << st[1].detail;
  EXPECT_EQ(
      st[1].detail,
      "pdsh ended (exit code 2) before an agent registered: agent: error: --gpu_ids 3: no GPU 3");
  // mute's command exited 0: not failed, silent (its agent would register by itself).
  EXPECT_EQ(st[2].state, AgentLauncher::State::kSilent) << st[2].detail;
  EXPECT_TRUE(absl::StrContains(st[2].detail,
                                "(its pdsh still runs; output in " + s.log_dir + "/pdsh.log)"))
      << st[2].detail;
}

TEST(PdshBackend, NoPdshFailsEveryHost) {
  LaunchSettings s = Settings();
  s.log_dir = FreshTestDir("pdsh_missing");
  const PdshBackend pdsh("/nonexistent/pdsh", "exec");
  AgentLauncher l(pdsh, s, absl::Seconds(10), {HostEntry{"a", 0, 1}, HostEntry{"b", 0, 2}});
  l.Start(absl::Now());
  PollUntil(l, {}, [&] { return l.AllSettled(); });
  for (const auto& host : l.status()) {
    EXPECT_EQ(host.state, AgentLauncher::State::kFailed) << host.host;
    EXPECT_TRUE(
        absl::StartsWith(host.detail, "pdsh ended (exit code 127) before an agent registered: "))
        << host.detail;
    EXPECT_TRUE(absl::StrContains(host.detail, "/nonexistent/pdsh")) << host.detail;
  }
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
