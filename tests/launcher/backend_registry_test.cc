// launcher/backends/backend_registry.h over all_backends.cc: every --start_agents value finds
// its backend, an unknown one is refused naming the registered ones, and the help and the
// host-source hint come from the backends themselves. (A new backend needs no line here: its
// own test checks it.)
#include "launcher/backends/backend_registry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
