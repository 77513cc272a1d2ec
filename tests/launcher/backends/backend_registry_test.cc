// launcher/backends/backend_registry.h over all_backends.cc: every --start_agents value finds
// its backend, an unknown one is refused naming the registered ones, and the help, the
// host-source hint and the backends' own flags come from the backends themselves. Every
// registered backend keeps launcher_backend.h's contract (a new backend is checked here with
// no edit; its own test checks its commands).
#include "launcher/backends/backend_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "launcher/hosts_file.h"

namespace tunefleet {
namespace launcher {
namespace {

TEST(BackendRegistry, FindsEachBackendByName) {
  const std::vector<std::string> names = BackendNames();
  ASSERT_GE(names.size(), 3u);
  // The first three are the head's own since before the registry, in their old order.
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"ssh", "slurm", "none"}));
  for (const std::string& name : names) {
    absl::StatusOr<const LauncherBackend*> backend = FindBackend(name);
    ASSERT_TRUE(backend.ok()) << name;
    EXPECT_EQ((*backend)->name(), name);
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 1) << name << " registered twice";
  }
  EXPECT_FALSE((*FindBackend("none"))->starts_agents());
  EXPECT_TRUE((*FindBackend("ssh"))->starts_agents());
  EXPECT_TRUE((*FindBackend("slurm"))->has_hosts());
  EXPECT_FALSE((*FindBackend("ssh"))->has_hosts());
}

TEST(BackendRegistry, UnknownNameListsTheRegisteredOnes) {
  absl::StatusOr<const LauncherBackend*> backend = FindBackend("kubernetes");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> names = BackendNames();
  const std::string all_but_last = absl::StrJoin(names.begin(), names.end() - 1, ", ");
  EXPECT_EQ(backend.status().message(), "--start_agents must be " + all_but_last + " or " +
                                            names.back() + ", got 'kubernetes'");
}

TEST(BackendRegistry, HelpAndHostSources) {
  const std::string help = StartAgentsHelp();
  EXPECT_TRUE(
      absl::StartsWith(help, "ssh: start an agent on each host through --remote_shell; slurm: "))
      << help;
  EXPECT_TRUE(absl::StrContains(help, "; none: agents are started by hand or by a scheduler"))
      << help;
  for (const std::string& name : BackendNames()) {
    EXPECT_TRUE(absl::StrContains(help, name + ": ")) << name << " has no help: " << help;
  }
  EXPECT_EQ(BackendsWithHosts(), "--start_agents slurm");
}

TEST(BackendRegistry, SlurmRefusesNodes) {
  const LauncherBackend* slurm = *FindBackend("slurm");
  EXPECT_EQ(slurm->CheckFlags(BackendFlags{"hosts.txt", "ipc:///x"}).message(),
            "--nodes with --start_agents slurm: the hosts are the allocation's nodes "
            "(SLURM_JOB_NODELIST); pick some with --include or --exclude");
  EXPECT_TRUE(slurm->CheckFlags(BackendFlags{"", "ipc:///x"}).ok());
  EXPECT_TRUE((*FindBackend("ssh"))->CheckFlags(BackendFlags{"hosts.txt", "ipc:///x"}).ok());
}

// What every backend promises (launcher_backend.h): a name, help, flags whose defaults pass
// their own checks and whose names no other backend declares differently; a backend that
// starts agents plans every host in exactly one command, each with its log and what to call
// it; one that starts none plans nothing.
TEST(BackendRegistry, EveryBackendKeepsTheContract) {
  const std::vector<HostEntry> hosts = {{"gpu1", 2}, {"alice@gpu2"}};
  LaunchSettings settings;
  settings.agent_binary = "/opt/tunefleet/agent";
  settings.head_endpoint = "tcp://10.0.0.1:5555";
  settings.log_dir = "/logs";
  for (const BackendFlag& flag : AllBackendFlags()) {
    settings.backend_flags[flag.name] = flag.default_value;
  }
  for (const std::string& name : BackendNames()) {
    SCOPED_TRACE(name);
    const LauncherBackend* backend = *FindBackend(name);
    EXPECT_FALSE(backend->help().empty());
    for (const BackendFlag& flag : backend->flags()) {
      EXPECT_FALSE(flag.name.empty());
      EXPECT_FALSE(flag.help.empty()) << flag.name;
      if (flag.check != nullptr) {
        EXPECT_TRUE(flag.check(flag.default_value).ok()) << flag.name;
      }
      int declared = 0;
      for (const BackendFlag& other : AllBackendFlags()) declared += other.name == flag.name;
      EXPECT_EQ(declared, 1) << flag.name;
    }
    const std::vector<LaunchCommand> plan = backend->Plan(settings, hosts);
    if (!backend->starts_agents()) {
      EXPECT_TRUE(plan.empty());
      continue;
    }
    std::vector<int> planned(hosts.size(), 0);
    for (const LaunchCommand& c : plan) {
      EXPECT_FALSE(c.shell_command.empty());
      EXPECT_FALSE(c.log_path.empty());
      EXPECT_FALSE(c.start_line.empty());
      EXPECT_FALSE(c.program.empty());
      EXPECT_FALSE(c.noun.empty());
      EXPECT_EQ(c.host_logs.size(), c.hosts.size());
      EXPECT_TRUE(absl::StrContains(c.shell_command, "/opt/tunefleet/agent")) << c.shell_command;
      for (size_t h : c.hosts) {
        ASSERT_LT(h, hosts.size());
        ++planned[h];
      }
    }
    EXPECT_EQ(planned, std::vector<int>(hosts.size(), 1));
  }
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
