// Key folders as OpenSSH's StrictModes would have them (issue 32, item 8): GenerateKeyFolder
// writes secret files 0600 in a 0700 folder and refuses a file in place of the folder; loading
// refuses a secret key open to group or others, a key folder writable by group or others, and
// an authorized_keys or server.pub writable by group or others, each with one line naming the
// file, its mode and the chmod that fixes it.
#include "comm/curve_auth.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace comm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int ModeOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// A fresh key folder from GenerateKeyFolder.
std::string NewKeys(const std::string& name) {
  const std::string dir = JoinPath(FreshTestDir(name), "keys");
  const absl::Status made = GenerateKeyFolder(dir);
  EXPECT_TRUE(made.ok()) << made;
  return dir;
}

// One line, PermissionDenied, naming `path`, its mode and `fix`.
void ExpectRefused(const absl::Status& status, const std::string& path, const std::string& mode,
                   const std::string& fix) {
  ASSERT_FALSE(status.ok()) << path << " was accepted at mode " << mode;
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("(mode " + mode + ")"));
  EXPECT_THAT(message, HasSubstr("run " + fix + " " + path));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

TEST(CurveAuthTest, GeneratedFolderIsPrivateAndLoads) {
  const std::string dir = JoinPath(FreshTestDir("curve_generated"), "keys");
  const mode_t old_umask = ::umask(0);  // a lax umask must not widen anything
  const absl::Status made = GenerateKeyFolder(dir);
  ::umask(old_umask);
  ASSERT_TRUE(made.ok()) << made;
  EXPECT_EQ(ModeOf(dir), 0700);
  EXPECT_EQ(ModeOf(JoinPath(dir, "server.key")), 0600);
  EXPECT_EQ(ModeOf(JoinPath(dir, "client.key")), 0600);
  EXPECT_EQ(ModeOf(JoinPath(dir, "authorized_keys")) & 022, 0);
  EXPECT_EQ(ModeOf(JoinPath(dir, "server.pub")) & 022, 0);
  EXPECT_TRUE(LoadServerKeys(dir).ok()) << LoadServerKeys(dir).status();
  EXPECT_TRUE(LoadClientKeys(dir).ok()) << LoadClientKeys(dir).status();
}

TEST(CurveAuthTest, ExistingLaxFolderIsMadePrivate) {
  const std::string dir = JoinPath(FreshTestDir("curve_lax_existing"), "keys");
  ASSERT_TRUE(MakeDirs(dir).ok());
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  ASSERT_TRUE(GenerateKeyFolder(dir).ok());
  EXPECT_EQ(ModeOf(dir), 0700);
}

TEST(CurveAuthTest, GenKeysOnAFileIsAUsageError) {
  const std::string file = JoinPath(FreshTestDir("curve_gen_file"), "not-a-folder");
  ASSERT_TRUE(WriteFileAtomically(file, "x\n").ok());
  const absl::Status s = GenerateKeyFolder(file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(file + " is not a folder"));
  EXPECT_EQ(ReadFile(file).value_or(""), "x\n");  // untouched
}

TEST(CurveAuthTest, GenKeysNeverOverwrites) {
  const std::string dir = NewKeys("curve_twice");
  EXPECT_EQ(GenerateKeyFolder(dir).code(), absl::StatusCode::kAlreadyExists);
}

TEST(CurveAuthTest, SecretKeyReadableByOthersIsRefused) {
  const std::string dir = NewKeys("curve_secret_0644");
  for (const char* name : {"server.key", "client.key"}) {
    const std::string path = JoinPath(dir, name);
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  }
  ExpectRefused(LoadServerKeys(dir).status(), JoinPath(dir, "server.key"), "0644", "chmod 600");
  ExpectRefused(LoadClientKeys(dir).status(), JoinPath(dir, "client.key"), "0644", "chmod 600");
}

TEST(CurveAuthTest, SecretKeyReadableByGroupIsRefused) {
  const std::string dir = NewKeys("curve_secret_0640");
  const std::string path = JoinPath(dir, "client.key");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ExpectRefused(LoadClientKeys(dir).status(), path, "0640", "chmod 600");
  EXPECT_TRUE(LoadServerKeys(dir).ok());  // the head does not read client.key
}

TEST(CurveAuthTest, WorldWritableKeyFolderIsRefused) {
  const std::string dir = NewKeys("curve_folder_0777");
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  ExpectRefused(LoadServerKeys(dir).status(), dir, "0777", "chmod 700");
  ExpectRefused(LoadClientKeys(dir).status(), dir, "0777", "chmod 700");
  ASSERT_EQ(::chmod(dir.c_str(), 0770), 0);  // group-writable too
  ExpectRefused(LoadServerKeys(dir).status(), dir, "0770", "chmod 700");
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);  // readable is fine, as for ~/.ssh
  EXPECT_TRUE(LoadServerKeys(dir).ok()) << LoadServerKeys(dir).status();
}

TEST(CurveAuthTest, WritableAuthorizedKeysIsRefused) {
  const std::string dir = NewKeys("curve_authorized_0666");
  const std::string path = JoinPath(dir, "authorized_keys");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ExpectRefused(LoadServerKeys(dir).status(), path, "0666", "chmod go-w");
  ASSERT_EQ(::chmod(path.c_str(), 0620), 0);
  ExpectRefused(LoadServerKeys(dir).status(), path, "0620", "chmod go-w");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_TRUE(LoadServerKeys(dir).ok()) << LoadServerKeys(dir).status();
}

TEST(CurveAuthTest, WritableServerPubIsRefused) {
  const std::string dir = NewKeys("curve_pub_0666");
  const std::string path = JoinPath(dir, "server.pub");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ExpectRefused(LoadClientKeys(dir).status(), path, "0666", "chmod go-w");
}

TEST(CurveAuthTest, AnotherUsersKeyIsRefused) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root to give a file to another uid; CI runs as root";
  const std::string dir = NewKeys("curve_owner");
  const std::string path = JoinPath(dir, "client.key");
  ASSERT_EQ(::chown(path.c_str(), 54321, 54321), 0);
  const absl::Status s = LoadClientKeys(dir).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(path + " belongs to uid 54321"));
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
