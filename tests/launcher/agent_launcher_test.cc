// launcher/backends/agent_launcher.h with real processes, through the ssh and slurm backends
// (ssh_backend.h, slurm_backend.h): the commands they build (user@, slots, quoting, the srun
// step), a host reported up when its agent name registers, failed with the command's exit code
// and last line when it ends first, silent when neither happens in time.
#include "launcher/backends/agent_launcher.h"

#include <cstdlib>
#include <thread>

#include "absl/strings/match.h"
#include "common/shell_quote.h"
#include "gtest/gtest.h"
#include "launcher/backends/slurm_backend.h"
#include "launcher/backends/ssh_backend.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr absl::Duration kRegisterTimeout = absl::Milliseconds(300);

LaunchSettings Opts(const std::string& shell) {
  LaunchSettings o;
  o.backend_flags["remote_shell"] = shell;  // the ssh backend's --remote_shell
  o.agent_binary = "/opt/tune fleet/agent";
  o.head_endpoint = "tcp://10.0.0.1:5555";
  const char* tmp = std::getenv("TEST_TMPDIR");
  o.log_dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/launcher";
  return o;
}

TEST(AgentLauncher, Command) {
  EXPECT_EQ(
      SshBackend::CommandFor(Opts("ssh -o BatchMode=yes {host}"), HostEntry{"ubuntu@gpu1", 4, 1}),
      "exec ssh -o BatchMode=yes ubuntu@gpu1 '/opt/tune fleet/agent' --head tcp://10.0.0.1:5555 "
      "--name gpu1 --detach --slots 4");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("plain-word_1.2"), "plain-word_1.2");
  EXPECT_EQ(AgentNameOf("a@b"), "b");
}

void PollUntilSettled(AgentLauncher& l, const absl::flat_hash_set<std::string>& up);

TEST(AgentLauncher, SlurmCommand) {
  LaunchSettings o = Opts("unused {host}");
  o.log_dir = "/logs";
  o.keys_dir = "/shared/keys";
  HostEntry a{"n01", 4, 0};
  HostEntry b{"n02", 0, 0};
  HostEntry c{"n03", 2, 0, {0, 2}};
  EXPECT_EQ(SlurmBackend().Command(o, {a, b, c}),
            "exec srun --nodes=3 --ntasks=3 --ntasks-per-node=1 --overlap --nodelist=n01,n02,n03 "
            "--kill-on-bad-exit=0 --wait=0 --job-name=tunefleet-agents --output=/logs/%N.log "
            "/bin/sh -c 'case \"$SLURMD_NODENAME\" in n01) set -- --slots 4;; n03) set -- "
            "--slots 2 --gpu_ids 0,2;; esac; exec '\\''/opt/tune fleet/agent'\\'' --head "
            "tcp://10.0.0.1:5555 --name \"$SLURMD_NODENAME\" --keys /shared/keys \"$@\"' agent");
  // The remote shell passes the GPU filters too.
  EXPECT_EQ(
      SshBackend::CommandFor(o, HostEntry{"n04", 0, 0, {}, {1}}),
      "exec unused n04 '/opt/tune fleet/agent' --head tcp://10.0.0.1:5555 --name n04 --detach "
      "--exclude_gpu_ids 1 --keys /shared/keys");
}

// The job step ends before any agent registers: every host fails, with the last line of its own
// log (%N.log) when it has one, else srun's.
TEST(AgentLauncher, SlurmStepEndingFailsEveryHost) {
  LaunchSettings o = Opts("unused {host}");
  o.log_dir += "/slurm";
  const std::string fake = o.log_dir + "/fake-srun";
  ASSERT_EQ(std::system(("mkdir -p " + o.log_dir +
                         " && printf '%s\\n' '#!/bin/sh' "
                         "'echo \"agent: error: --gpu_ids 3: no GPU 3\" > " +
                         o.log_dir +
                         "/n2.log' "
                         "'echo \"srun: error: Unable to create step for job 9: busy\" >&2' "
                         "'exit 1' > " +
                         fake + " && chmod +x " + fake)
                            .c_str()),
            0);
  const SlurmBackend slurm(fake);
  AgentLauncher l(slurm, o, kRegisterTimeout, {HostEntry{"n1", 0, 0}, HostEntry{"n2", 0, 0}});
  l.Start(absl::Now());
  PollUntilSettled(l, {});
  ASSERT_TRUE(l.AllSettled());
  const auto& s = l.status();
  EXPECT_EQ(s[0].state, AgentLauncher::State::kFailed);
  EXPECT_EQ(s[0].detail,
            "the Slurm job step of the agents ended (exit code 1) before an agent registered: "
            "srun: error: Unable to create step for job 9: busy");
  EXPECT_EQ(s[1].state, AgentLauncher::State::kFailed);
  EXPECT_EQ(s[1].detail,
            "the Slurm job step of the agents ended (exit code 1) before an agent registered: "
            "agent: error: --gpu_ids 3: no GPU 3");
}

void PollUntilSettled(AgentLauncher& l, const absl::flat_hash_set<std::string>& up) {
  for (int i = 0; i < 200 && !l.AllSettled(); ++i) {
    l.Poll(absl::Now(), up);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(AgentLauncher, UpFailedSilent) {
  // The "remote shell" ignores the agent command: host ok sleeps (its agent "registers"),
  // host bad fails like ssh, host mute sleeps and never registers.
  const SshBackend ssh;
  AgentLauncher l(ssh,
                  Opts("sh -c 'case {host} in bad) echo \"ssh: connect to host bad port 22: "
                       "refused\" >&2; exit 255;; *) sleep 5;; esac' x"),
                  kRegisterTimeout,
                  {HostEntry{"ok", 0, 1}, HostEntry{"bad", 0, 2}, HostEntry{"mute", 0, 3}});
  l.Start(absl::Now());
  PollUntilSettled(l, {"ok"});
  ASSERT_TRUE(l.AllSettled());
  const auto& s = l.status();
  EXPECT_EQ(s[0].state, AgentLauncher::State::kUp);
  EXPECT_EQ(s[1].state, AgentLauncher::State::kFailed);
  EXPECT_TRUE(absl::StrContains(s[1].detail, "exit code 255")) << s[1].detail;
  EXPECT_TRUE(absl::StrContains(s[1].detail, "ssh: connect to host bad port 22: refused"))
      << s[1].detail;
  EXPECT_EQ(s[2].state, AgentLauncher::State::kSilent);
  EXPECT_TRUE(absl::StrContains(s[2].detail, "no agent registered within")) << s[2].detail;
  // A silent host whose agent registers late becomes up.
  l.Poll(absl::Now(), {"ok", "mute"});
  EXPECT_EQ(l.status()[2].state, AgentLauncher::State::kUp);
  l.Stop();
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
