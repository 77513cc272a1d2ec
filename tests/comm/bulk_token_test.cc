// Bulk tokens (comm/bulk_token.h): 32 fresh random bytes each time; equal only when equal (any
// length or byte differing, or an empty expected token, is not); token files round-trip and one
// that group or others may read is refused with the chmod that fixes it.
#include "comm/bulk_token.h"

#include <sys/stat.h>

#include <string>

#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace comm {
namespace {

using ::testing::HasSubstr;

TEST(BulkTokenTest, NewTokensAreRandom) {
  absl::StatusOr<std::string> a = NewBulkToken(), b = NewBulkToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), kBulkTokenBytes);
  EXPECT_NE(*a, *b);
}

TEST(BulkTokenTest, SameOnlyWhenEqual) {
  const std::string t = *NewBulkToken();
  EXPECT_TRUE(SameBulkToken(t, t));
  std::string other = t;
  other[0] ^= 0x80;
  EXPECT_FALSE(SameBulkToken(other, t));
  other = t;
  other.back() ^= 1;
  EXPECT_FALSE(SameBulkToken(other, t));
  EXPECT_FALSE(SameBulkToken("", t));
  EXPECT_FALSE(SameBulkToken(t.substr(0, 31), t));
  EXPECT_FALSE(SameBulkToken(t + "x", t));
  EXPECT_FALSE(SameBulkToken("", ""));  // a server without a token serves nobody
}

TEST(BulkTokenTest, FileRoundTripAndPrivacy) {
  const std::string path = JoinPath(FreshTestDir("bulk_token_file"), "token");
  const std::string t = *NewBulkToken();
  ASSERT_TRUE(WriteBulkTokenFile(path, t).ok());
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  absl::StatusOr<std::string> read = ReadBulkTokenFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, t);

  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  read = ReadBulkTokenFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(read.status().message()),
              HasSubstr("(mode 0644): it must be private; run chmod 600 " + path));

  ASSERT_TRUE(WriteFileAtomically(path, "not hex at all\n", 0600).ok());
  EXPECT_EQ(ReadBulkTokenFile(path).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadBulkTokenFile(path + ".missing").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
