// Hosts file: DeepSpeed / MPI syntax; bad lines name the file and the line.
#include "launcher/hosts_file.h"

#include <fstream>

#include "gtest/gtest.h"

namespace tunefleet {
namespace launcher {
namespace {

TEST(HostsFileTest, ParsesHostsSlotsCommentsAndBlankLines) {
  auto hosts = ParseHostsFile(
      "# cluster\n\ngpu-node-1 slots=8\n  10.0.0.12\tslots=4   # rack 2\nroot@gpu-3\r\n", "h.txt");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  ASSERT_EQ(hosts->size(), 3u);
  EXPECT_EQ((*hosts)[0].host, "gpu-node-1");
  EXPECT_EQ((*hosts)[0].slots, 8);
  EXPECT_EQ((*hosts)[0].line, 3);
  EXPECT_EQ((*hosts)[1].host, "10.0.0.12");
  EXPECT_EQ((*hosts)[1].slots, 4);
  EXPECT_EQ((*hosts)[2].host, "root@gpu-3");
  EXPECT_EQ((*hosts)[2].slots, 0);
}

TEST(HostsFileTest, ShippedExampleParses) {
  auto hosts = LoadHostsFile("configs/hosts.example.txt");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_EQ(hosts->size(), 3u);
}

TEST(HostsFileTest, MissingFile) {
  EXPECT_EQ(std::string(LoadHostsFile("/nonexistent/hosts.txt").status().message()),
            "/nonexistent/hosts.txt: cannot open file");
}

struct BadCase {
  std::string text;
  std::string message;  // full message for file "hosts.txt"
};

class HostsFileBadInputTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(HostsFileBadInputTest, NamesFileAndLine) {
  std::string path = ::testing::TempDir() + "/hosts.txt";
  std::ofstream(path) << GetParam().text;
  auto hosts = LoadHostsFile(path);
  ASSERT_FALSE(hosts.ok()) << "accepted: " << GetParam().text;
  EXPECT_EQ(std::string(hosts.status().message()), path + GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    BadInputs, HostsFileBadInputTest,
    ::testing::Values(
        BadCase{"a slots=2\nb\na slots=4\n", ":3: duplicate host 'a' (first on line 1)"},
        BadCase{"a slots=-2\n", ":1: slots must be between 1 and 4096, got -2"},
        BadCase{"a\nb slots=0\n", ":2: slots must be between 1 and 4096, got 0"},
        BadCase{"a slots=four\n", ":1: slots must be a positive integer, got 'four'"},
        BadCase{"a slots=\n", ":1: slots must be a positive integer, got ''"},
        BadCase{"a slots 4\n", ":1: unexpected 'slots' (expected HOST [slots=N])"},
        BadCase{"a gpus=4\n", ":1: unknown option 'gpus' (only slots=N is understood)"},
        BadCase{"a slots=2 slots=3\n", ":1: slots given twice"},
        BadCase{"slots=4\n", ":1: expected HOST [slots=N], the host comes first"},
        BadCase{"ho$t slots=1\n",
                ":1: 'ho$t' is not a host name or address (expected HOST [slots=N])"},
        BadCase{"", ":1: no hosts listed"},
        BadCase{"# only comments\n\n   \n", ":1: no hosts listed"}));

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
