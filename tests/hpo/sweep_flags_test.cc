// hpo sweep's flags, refused before anything starts: --head's endpoint, --keys without --head,
// the numeric ranges.
#include "hpo/config/sweep_flags.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;

TEST(CheckHeadEndpointTest, AcceptsTcpAndIpc) {
  for (const char* ok : {"tcp://127.0.0.1:5555", "tcp://head-node:1", "tcp://h.example.org:65535",
                         "tcp://[::1]:5555", "tcp://[fe80::1%eth0]:80", "ipc:///tmp/x/head.sock",
                         "ipc://relative.sock"}) {
    EXPECT_TRUE(CheckHeadEndpoint(ok).ok()) << ok << ": " << CheckHeadEndpoint(ok);
  }
}

TEST(CheckHeadEndpointTest, RefusesTheRestNamingTheValue) {
  for (const char* bad :
       {"garbage", "tcp://", "tcp://host", "tcp://:5555", "tcp://host:0", "tcp://host:65536",
        "tcp://host:99999", "tcp://host:port", "tcp://host:+80", "tcp://host:-1", "tcp://ho st:1",
        "tcp://h/x:1", "tcp://[::1:5555", "udp://host:5555", "ipc://", "host:5555"}) {
    const absl::Status s = CheckHeadEndpoint(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), HasSubstr(std::string("--head '") + bad + "'"));
    EXPECT_THAT(std::string(s.message()), HasSubstr("expected tcp://HOST:PORT or ipc://PATH"));
  }
  EXPECT_THAT(std::string(CheckHeadEndpoint("tcp://h:70000").message()),
              HasSubstr("not in 1-65535"));
}

TEST(CheckHeadEndpointTest, ClipsAHugeValue) {
  for (const std::string& huge :
       {"tcp://" + std::string(5 << 20, 'h'), "tcp://" + std::string(5 << 20, 'h') + ":1"}) {
    const std::string message(CheckHeadEndpoint(huge).message());
    EXPECT_LT(message.size(), 400u);
    EXPECT_THAT(message, HasSubstr(absl::StrCat("... (", huge.size(), " bytes)")));
  }
  EXPECT_THAT(std::string(CheckHeadEndpoint("tcp://" + std::string(254, 'h') + ":1").message()),
              HasSubstr("longer than 253"));
  EXPECT_TRUE(CheckHeadEndpoint("tcp://" + std::string(253, 'h') + ":1").ok());
}

TEST(CheckSweepFlagsTest, KeysNeedHead) {
  SweepFlags f;
  EXPECT_TRUE(CheckSweepFlags(f).ok());
  f.keys = "/etc/keys";
  EXPECT_EQ(CheckSweepFlags(f).message(),
            "--keys needs --head (dev mode's local head runs without keys)");
  f.head = "tcp://h:5555";
  // With --head, the key folder is loaded (and checked as ssh checks its files) at once.
  EXPECT_THAT(std::string(CheckSweepFlags(f).message()), HasSubstr("/etc/keys"));
  f.keys.clear();
  EXPECT_TRUE(CheckSweepFlags(f).ok());
  f.head = "garbage";
  EXPECT_THAT(std::string(CheckSweepFlags(f).message()), HasSubstr("--head 'garbage'"));
}

TEST(CheckSweepFlagsTest, Ranges) {
  SweepFlags f;
  f.slots = -1;
  EXPECT_EQ(CheckSweepFlags(f).message(),
            "--slots must be between 0 and 4096 (the agent's limit), got -1");
  f.slots = 100000000;
  EXPECT_EQ(CheckSweepFlags(f).message(),
            "--slots must be between 0 and 4096 (the agent's limit), got 100000000");
  f = SweepFlags();
  f.head_grace_s = -1;
  EXPECT_EQ(CheckSweepFlags(f).message(), "--head_grace_s must be >= 0");
  for (double share : {-0.1, 1.5}) {
    f = SweepFlags();
    f.max_failed_share = share;
    EXPECT_THAT(std::string(CheckSweepFlags(f).message()),
                HasSubstr("--max_failed_share must be in [0, 1]"));
  }
  f.max_failed_share = 1.0;
  EXPECT_TRUE(CheckSweepFlags(f).ok());
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
