// comm/bulk_commands.h: --bind parsing, and the exit codes of fetch's and hash's argument checks
// (the transfers themselves: bulk_transfer_test and the UCX staging integration tests).
#include "comm/bulk_commands.h"

#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace comm {
namespace {

TEST(SplitBindTest, TakesIpv4AndIpv6WithAndWithoutPort) {
  std::string ip;
  int port = -1;
  ASSERT_TRUE(SplitBind("127.0.0.1", &ip, &port).ok());
  EXPECT_EQ(ip, "127.0.0.1");
  EXPECT_EQ(port, 0);
  ASSERT_TRUE(SplitBind("10.1.2.3:4567", &ip, &port).ok());
  EXPECT_EQ(ip, "10.1.2.3");
  EXPECT_EQ(port, 4567);
  ASSERT_TRUE(SplitBind("[::1]", &ip, &port).ok());
  EXPECT_EQ(ip, "::1");
  EXPECT_EQ(port, 0);
  ASSERT_TRUE(SplitBind("[fe80::1]:65535", &ip, &port).ok());
  EXPECT_EQ(ip, "fe80::1");
  EXPECT_EQ(port, 65535);
}

TEST(SplitBindTest, RefusesWhatIsNotAnAddress) {
  std::string ip;
  int port = 0;
  for (const char* bad :
       {"", ":80", "[::1", "[::1]80", "1.2.3.4:65536", "1.2.3.4:-1", "1.2.3.4:http"}) {
    const absl::Status s = SplitBind(bad, &ip, &port);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("--bind"), std::string::npos) << s;
  }
}

TEST(BulkCommandsTest, UsageErrorsExitTwoAndMissingFilesOne) {
  EXPECT_EQ(BulkFetch({"--from", "127.0.0.1:1", "--hash", "abc", "--cache", "/tmp/x",
                       "--token_file", "/nonexistent"}),
            2);                                               // not a SHA-256 hash
  EXPECT_EQ(BulkFetch({"--hash", std::string(64, 'a')}), 2);  // --from missing
  EXPECT_EQ(BulkServe({"--bind", "127.0.0.1"}), 2);           // no PATH
  EXPECT_EQ(BulkHash({"/nonexistent/file"}), 1);
  EXPECT_EQ(BulkHash({}), 2);
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
