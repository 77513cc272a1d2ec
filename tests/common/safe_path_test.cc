// Writing where another user may have planted a link: the rule on synthetic stats, files created
// with the umask's modes, never a write through a link, and (as root, which can give an entry to
// another uid with lchown) links and files of another user in sticky and non-sticky shared
// folders refused while the victim behind them stays untouched.
#include "common/safe_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr uid_t kOther = 4242;  // a uid that is neither root nor us

std::string Fresh(const std::string& name) {
  std::string path = ::testing::TempDir();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  path += "/sp-" + name;
  const std::string cmd = "rm -rf '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
  return path;
}

struct stat Stat(uid_t uid, gid_t gid, mode_t mode) {
  struct stat st {};
  st.st_uid = uid;
  st.st_gid = gid;
  st.st_mode = mode;
  st.st_nlink = 1;
  return st;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// A folder like /tmp: 1777 (sticky), or 0777 without the sticky bit.
std::string Shared(const std::string& name, mode_t mode) {
  const std::string dir = Fresh(name);
  EXPECT_EQ(::chmod(dir.c_str(), mode), 0);
  return dir;
}

// A 0700 folder with one file in it, which nothing here may touch.
std::string Victim(const std::string& name) {
  const std::string dir = Fresh(name);
  EXPECT_TRUE(WriteFileAtomically(dir + "/secret", "secret\n", 0600).ok());
  return dir;
}

void ExpectUntouched(const std::string& victim) {
  EXPECT_EQ(*ReadFile(victim + "/secret"), "secret\n");
  const std::string cmd = "test $(ls -A '" + victim + "' | wc -l) -eq 1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "something was written into " << victim;
}

// Plants `link` -> `target` owned by `uid` (as root: lchown).
void PlantLink(const std::string& target, const std::string& link, uid_t uid) {
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0) << link;
  ASSERT_EQ(::lchown(link.c_str(), uid, uid), 0) << link;
}

bool Root() { return ::geteuid() == 0; }

TEST(SafePathRule, WhoCanWriteAFolder) {
  const uid_t me = 1000;
  const gid_t my_group = 1000;
  EXPECT_FALSE(OthersCanWrite(Stat(me, my_group, S_IFDIR | 0755), me, my_group));
  EXPECT_FALSE(OthersCanWrite(Stat(0, 0, S_IFDIR | 0755), me, my_group));   // root's
  EXPECT_TRUE(OthersCanWrite(Stat(77, 77, S_IFDIR | 0700), me, my_group));  // another owner
  EXPECT_TRUE(OthersCanWrite(Stat(me, my_group, S_IFDIR | 0777), me, my_group));
  EXPECT_TRUE(OthersCanWrite(Stat(0, 0, S_IFDIR | 01777), me, my_group));  // /tmp
  // Group-writable: by our own primary group (umask 002) it is ours; by another group not.
  EXPECT_FALSE(OthersCanWrite(Stat(me, my_group, S_IFDIR | 0775), me, my_group));
  EXPECT_TRUE(OthersCanWrite(Stat(me, 50, S_IFDIR | 0775), me, my_group));
}

TEST(SafePathRule, EntriesOfSharedFolders) {
  const uid_t me = 1000;
  const gid_t g = 1000;
  const struct stat tmp = Stat(0, 0, S_IFDIR | 01777);
  const struct stat open_folder = Stat(0, 0, S_IFDIR | 0777);
  const struct stat mine = Stat(me, g, S_IFREG | 0644);
  const struct stat roots = Stat(0, 0, S_IFDIR | 0755);
  const struct stat theirs = Stat(kOther, kOther, S_IFLNK | 0777);
  struct stat linked = mine;
  linked.st_nlink = 2;
  EXPECT_TRUE(CheckEntry("/tmp/new", "/tmp", tmp, nullptr, me, g).ok());  // created exclusively
  EXPECT_TRUE(CheckEntry("/tmp/mine", "/tmp", tmp, &mine, me, g).ok());
  EXPECT_TRUE(CheckEntry("/tmp/.X11-unix", "/tmp", tmp, &roots, me, g).ok());
  const absl::Status planted = CheckEntry("/tmp/trial-0", "/tmp", tmp, &theirs, me, g);
  EXPECT_TRUE(absl::IsPermissionDenied(planted));
  EXPECT_EQ(planted.message(),
            "/tmp/trial-0: is a symbolic link that belongs to uid 4242 (not to uid 1000), in /tmp "
            "(mode 1777, uid 0), which other users can write; refusing to use it");
  EXPECT_THAT(CheckEntry("/tmp/j.log", "/tmp", tmp, &linked, me, g).message(),
              HasSubstr("/tmp/j.log: has 2 hard links"));
  // Not sticky: anyone may swap any entry, ours included, so nothing there is used.
  for (const struct stat* entry : {static_cast<const struct stat*>(nullptr), &mine}) {
    const absl::Status s = CheckEntry("/o/x", "/o", open_folder, entry, me, g);
    EXPECT_TRUE(absl::IsPermissionDenied(s));
    EXPECT_THAT(s.message(), HasSubstr("its folder /o (mode 0777, uid 0) can be written by other "
                                       "users and is not sticky"));
  }
  // A folder only we can write: anything in it is as trusted as we are.
  const struct stat home = Stat(me, g, S_IFDIR | 0700);
  EXPECT_TRUE(CheckEntry("/h/x", "/h", home, &theirs, me, g).ok());
}

TEST(SafePath, FilesAndFoldersHonourTheUmask) {
  const std::string dir = Fresh("umask");
  const mode_t old = ::umask(027);
  absl::StatusOr<int> fd = OpenSafeFile(dir + "/a/b/f.log", O_WRONLY | O_CREAT, 0666,
                                        /*make_folders=*/true);
  ASSERT_TRUE(fd.ok()) << fd.status();
  ::close(*fd);
  EXPECT_TRUE(WriteFileAtomically(dir + "/a/report.html", "<html>").ok());
  EXPECT_TRUE(WriteFileAtomically(dir + "/a/secret", "s", 0600).ok());
  ::umask(077);
  EXPECT_TRUE(WriteFileAtomically(dir + "/a/private.html", "<html>").ok());
  ::umask(old);
  EXPECT_EQ(ModeOf(dir + "/a"), 0750u);
  EXPECT_EQ(ModeOf(dir + "/a/b"), 0750u);
  EXPECT_EQ(ModeOf(dir + "/a/b/f.log"), 0640u);
  EXPECT_EQ(ModeOf(dir + "/a/report.html"), 0640u);
  EXPECT_EQ(ModeOf(dir + "/a/secret"), 0600u);
  EXPECT_EQ(ModeOf(dir + "/a/private.html"), 0600u);
}

TEST(SafePath, NeverWritesThroughALinkToAFile) {
  const std::string dir = Fresh("filelink");
  const std::string victim = Victim("filelink-victim");
  // Even our own link, in our own folder: the file itself is never opened through a link.
  ASSERT_EQ(::symlink((victim + "/secret").c_str(), (dir + "/journal.log").c_str()), 0);
  absl::StatusOr<int> fd = OpenSafeFile(dir + "/journal.log", O_WRONLY | O_CREAT | O_APPEND);
  ASSERT_FALSE(fd.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(fd.status()));
  EXPECT_EQ(fd.status().message(),
            dir + "/journal.log: is a symbolic link; refusing to write through it");
  auto stream = OpenSafeStream(dir + "/journal.log", /*append=*/false);
  EXPECT_FALSE(stream.ok());
  EXPECT_THAT(CheckSafePath(dir + "/journal.log").message(), HasSubstr("is a symbolic link"));
  ExpectUntouched(victim);
  // An atomic write replaces our link with the file (rename does not follow it).
  ASSERT_TRUE(WriteFileAtomically(dir + "/journal.log", "new").ok());
  struct stat st;
  ASSERT_EQ(::lstat((dir + "/journal.log").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  ExpectUntouched(victim);
  // Missing paths are fine to check; a file where a folder must be is not a folder.
  EXPECT_TRUE(CheckSafePath(dir + "/no/such/j.log").ok());
  EXPECT_THAT(MakeSafeDirs(dir + "/journal.log/x").message(),
              HasSubstr(dir + "/journal.log: not a folder"));
}

TEST(SafePath, OurOwnLinkToAFolderIsFollowed) {
  const std::string dir = Fresh("ownlink");
  const std::string big = Fresh("ownlink-disk");
  ASSERT_EQ(::symlink(big.c_str(), (dir + "/runs").c_str()), 0);
  ASSERT_TRUE(MakeSafeDirs(dir + "/runs/x/trial-0").ok());
  EXPECT_TRUE(WriteFileAtomically(dir + "/runs/x/trial-0/metrics.jsonl", "{}\n").ok());
  EXPECT_EQ(*ReadFile(big + "/x/trial-0/metrics.jsonl"), "{}\n");
}

TEST(SafePath, StickyFolderRefusesAnotherUsersLinks) {
  ASSERT_TRUE(Root()) << "needs root to give a link to another uid (lchown); CI runs as root";
  const std::string shared = Shared("sticky", 01777);
  const std::string victim = Victim("sticky-victim");
  PlantLink(victim, shared + "/trial-0", kOther);
  PlantLink(victim + "/secret", shared + "/journal.log", kOther);
  PlantLink(victim + "/secret", shared + "/journal.html", kOther);
  // The trainer's output folder, a file in it, the journal, the report: all refused.
  const absl::Status dirs = MakeDirs(shared + "/trial-0/model");
  EXPECT_TRUE(absl::IsPermissionDenied(dirs));
  EXPECT_THAT(dirs.message(), HasSubstr(shared + "/trial-0: is a symbolic link that belongs to "
                                                 "uid 4242"));
  EXPECT_FALSE(OpenSafeStream(shared + "/trial-0/metrics.jsonl", false).ok());
  EXPECT_FALSE(WriteFileAtomically(shared + "/trial-0/model.safetensors", "w").ok());
  EXPECT_FALSE(OpenSafeFile(shared + "/journal.log", O_RDWR | O_CREAT | O_APPEND).ok());
  const absl::Status report = WriteFileAtomically(shared + "/journal.html", "<html>");
  EXPECT_TRUE(absl::IsPermissionDenied(report));
  EXPECT_THAT(report.message(), HasSubstr(shared + "/journal.html: is a symbolic link that "
                                                   "belongs to uid 4242"));
  EXPECT_THAT(CheckSafePath(shared + "/trial-0/x").message(), HasSubstr("uid 4242"));
  ExpectUntouched(victim);
  // A plain file or folder of theirs is refused too; ours, and new entries, are fine.
  ASSERT_EQ(::mkdir((shared + "/theirs").c_str(), 0777), 0);
  ASSERT_EQ(::chown((shared + "/theirs").c_str(), kOther, kOther), 0);
  EXPECT_FALSE(MakeDirs(shared + "/theirs/trial-1").ok());
  EXPECT_TRUE(MakeDirs(shared + "/run/trial-1").ok());
  EXPECT_TRUE(WriteFileAtomically(shared + "/run/journal.html", "<html>").ok());
  absl::StatusOr<int> journal = OpenSafeFile(shared + "/j.log", O_RDWR | O_CREAT | O_APPEND);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ::close(*journal);
  journal = OpenSafeFile(shared + "/j.log", O_RDWR | O_CREAT | O_APPEND);  // ours: reopened
  ASSERT_TRUE(journal.ok()) << journal.status();
  ::close(*journal);
  // Our file with a second hard link there (someone linked it in) is refused.
  ASSERT_EQ(::link((shared + "/j.log").c_str(), (shared + "/j2.log").c_str()), 0);
  EXPECT_THAT(OpenSafeFile(shared + "/j.log", O_RDWR | O_APPEND).status().message(),
              HasSubstr("hard links"));
}

TEST(SafePath, WorldWritableFolderWithoutStickyBitIsRefused) {
  const std::string shared = Shared("open", 0777);
  const std::string victim = Victim("open-victim");
  EXPECT_TRUE(absl::IsPermissionDenied(MakeDirs(shared + "/trial-0")));
  EXPECT_TRUE(absl::IsPermissionDenied(WriteFileAtomically(shared + "/journal.html", "x")));
  const absl::Status s = CheckSafePath(shared + "/journal.log");
  EXPECT_THAT(s.message(), HasSubstr("can be written by other users and is not sticky"));
  EXPECT_FALSE(OpenSafeFile(shared + "/journal.log", O_RDWR | O_CREAT).ok());
  // Nothing was created there.
  const std::string cmd = "test -z \"$(ls -A '" + shared + "')\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  ExpectUntouched(victim);
}

}  // namespace
}  // namespace tunefleet
