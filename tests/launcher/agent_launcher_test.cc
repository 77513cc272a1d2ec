// launcher/agent_launcher.h with real processes: the command built from the template (user@,
// slots, quoting), a host reported up when its agent name registers, failed with the shell's exit
// code and last line when the shell ends first, silent when neither happens in time.
#include "launcher/agent_launcher.h"

#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

AgentLauncher::Options Opts(const std::string& shell) {
  AgentLauncher::Options o;
  o.remote_shell = shell;
  o.agent_binary = "/opt/tune fleet/agent";
  o.head_endpoint = "tcp://10.0.0.1:5555";
  const char* tmp = std::getenv("TEST_TMPDIR");
  o.log_dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/launcher";
  o.register_timeout = absl::Milliseconds(300);
  return o;
}

TEST(AgentLauncher, Command) {
  AgentLauncher l(Opts("ssh -o BatchMode=yes {host}"), {});
  EXPECT_EQ(l.CommandFor(HostEntry{"ubuntu@gpu1", 4, 1}),
            "exec ssh -o BatchMode=yes ubuntu@gpu1 '/opt/tune fleet/agent' --head tcp://10.0.0.1:5555 "
            "--name gpu1 --detach --slots 4");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("plain-word_1.2"), "plain-word_1.2");
  EXPECT_EQ(AgentNameOf("a@b"), "b");
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
  AgentLauncher l(Opts("sh -c 'case {host} in bad) echo \"ssh: connect to host bad port 22: "
                       "refused\" >&2; exit 255;; *) sleep 5;; esac' x"),
                  {HostEntry{"ok", 0, 1}, HostEntry{"bad", 0, 2}, HostEntry{"mute", 0, 3}});
  l.Start(absl::Now());
  PollUntilSettled(l, {"ok"});
  ASSERT_TRUE(l.AllSettled());
  const auto& s = l.status();
  EXPECT_EQ(s[0].state, AgentLauncher::State::kUp);
  EXPECT_EQ(s[1].state, AgentLauncher::State::kFailed);
  EXPECT_TRUE(absl::StrContains(s[1].detail, "exit code 255")) << s[1].detail;
  EXPECT_TRUE(absl::StrContains(s[1].detail, "ssh: connect to host bad port 22: refused")) << s[1].detail;
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
