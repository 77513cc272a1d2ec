// launcher/backends/slurm_hostlist.h: Slurm host lists expanded as `scontrol show hostnames` does.
// The expected lists below are what scontrol (slurm-wlm 22.05.8) printed for them; where scontrol
// is installed (CI: scripts/setup.sh installs it) the test also asks it again for each list,
// with a throwaway slurm.conf (scontrol needs one to start, not a controller), and for the
// malformed ones checks that scontrol refuses them too.
#include "launcher/backends/slurm_hostlist.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

using Hosts = std::vector<std::string>;

struct Case {
  std::string list;
  Hosts want;
};

const std::vector<Case>& GoodCases() {
  static const auto* kCases = new std::vector<Case>{
      {"node[01-04,07],gpu-a", {"node01", "node02", "node03", "node04", "node07", "gpu-a"}},
      {"rack[1-2]-n[1-3]",
       {"rack1-n1", "rack1-n2", "rack1-n3", "rack2-n1", "rack2-n2", "rack2-n3"}},
      {"a,b", {"a", "b"}},
      {"a b", {"a", "b"}},
      {"gpu", {"gpu"}},
      {"n[9-11]", {"n9", "n10", "n11"}},
      {"n[001-003],m[1]", {"n001", "n002", "n003", "m1"}},
      {"n[01-2]", {"n01", "n02"}},
      {"n[1-02]", {"n1", "n2"}},
      {"n[099-101]", {"n099", "n100", "n101"}},
      {"a[0-1],a1", {"a0", "a1", "a1"}},
      {"[1-2]", {"1", "2"}},
      {"n[1-3],", {"n1", "n2", "n3"}},
      {",n1", {"n1"}},
      {"n[1-2]-[5-6]", {"n1-5", "n1-6", "n2-5", "n2-6"}},
      {"n[1-2],n[3-4]", {"n1", "n2", "n3", "n4"}},
  };
  return *kCases;
}

// Accepted here, refused by scontrol ("Invalid hostlist"): a suffix after a lone bracket.
const std::vector<Case>& LenientCases() {
  static const auto* kCases = new std::vector<Case>{
      {"gpu-node-[1,3-4].cluster",
       {"gpu-node-1.cluster", "gpu-node-3.cluster", "gpu-node-4.cluster"}},
      {"n[1-2]0", {"n10", "n20"}},
  };
  return *kCases;
}

const std::vector<std::pair<std::string, std::string>>& BadCases() {
  static const auto* kCases = new std::vector<std::pair<std::string, std::string>>{
      {"n[3-1]", "host list 'n[3-1]': the range 3-1 runs backwards"},
      {"n[1,,2]", "host list 'n[1,,2]': '[1,,2]' holds '', not a number or a range lo-hi"},
      {"n[a-b]", "host list 'n[a-b]': '[a-b]' holds 'a-b', not a number or a range lo-hi"},
      {"x[1,3-4]y[a]", "host list 'x[1,3-4]y[a]': '[a]' holds 'a', not a number or a range lo-hi"},
      {"n[1-2", "host list 'n[1-2': a '[' without its ']'"},
      {"n]", "host list 'n]': a ']' without its '['"},
      {"n[1-9999999]", "host list 'n[1-9999999]': more than 65536 hosts"},
      {"a[1-300]b[1-300]", "host list 'a[1-300]b[1-300]': more than 65536 hosts"},
  };
  return *kCases;
}

TEST(SlurmHostList, ExpandsAsScontrolDid) {
  std::vector<Case> cases = GoodCases();
  cases.insert(cases.end(), LenientCases().begin(), LenientCases().end());
  for (const Case& c : cases) {
    auto got = ExpandHostList(c.list);
    ASSERT_TRUE(got.ok()) << c.list << ": " << got.status();
    EXPECT_EQ(*got, c.want) << c.list;
  }
}

TEST(SlurmHostList, MalformedListsAreOneLineErrors) {
  for (const auto& [list, message] : BadCases()) {
    auto got = ExpandHostList(list);
    ASSERT_FALSE(got.ok()) << list << " gave " << absl::StrJoin(*got, " ");
    EXPECT_EQ(got.status().message(), message);
    EXPECT_TRUE(absl::IsInvalidArgument(got.status()));
  }
  // An empty list is no host, not an error.
  EXPECT_TRUE(ExpandHostList("")->empty());
}

// `scontrol show hostnames LIST`: its output lines, or nullopt when it refused the list (it
// exits 0 then too, with nothing on stdout and "Invalid hostlist" on stderr).
std::optional<Hosts> Scontrol(const std::string& conf, const std::string& list) {
  const std::string command =
      "SLURM_CONF=" + conf + " scontrol show hostnames '" + list + "' 2>/dev/null";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0 || out.empty()) return std::nullopt;
  return Hosts(absl::StrSplit(out, '\n', absl::SkipEmpty()));
}

TEST(SlurmHostList, AgreesWithScontrolNow) {
  if (std::system("command -v scontrol > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no scontrol (slurm-client) here";
  }
  const std::string dir = FreshTestDir("slurm-hostlist");
  const std::string conf = JoinPath(dir, "slurm.conf");
  ASSERT_TRUE(WriteFileAtomically(conf, "ClusterName=t\nSlurmctldHost=localhost\n").ok());
  for (const Case& c : GoodCases()) {
    const std::optional<Hosts> theirs = Scontrol(conf, c.list);
    ASSERT_TRUE(theirs.has_value()) << "scontrol refused " << c.list;
    EXPECT_EQ(*ExpandHostList(c.list), *theirs) << c.list;
  }
  // scontrol refuses the malformed lists too, but for two unbalanced ones that it turns into
  // the host "n]": those are refused here on purpose.
  for (const auto& [list, message] : BadCases()) {
    if (absl::StrContains(message, "more than")) continue;  // scontrol would print them all
    const std::optional<Hosts> theirs = Scontrol(conf, list);
    if (list == "n[1-2" || list == "n]") {
      EXPECT_EQ(theirs, std::optional<Hosts>(Hosts{"n]"})) << list;
      continue;
    }
    EXPECT_FALSE(theirs.has_value()) << "scontrol accepts " << list;
  }
  for (const Case& c : LenientCases()) {
    EXPECT_FALSE(Scontrol(conf, c.list).has_value()) << "scontrol now accepts " << c.list;
  }
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
