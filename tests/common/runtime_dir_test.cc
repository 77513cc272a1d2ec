// Runtime folders: made 0700, and refused when another user made them first, when they are
// links, or when others may use them; files opened without following links.
#include "common/runtime_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::string Fresh(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/rt-" + name;
  std::string cmd = "rm -rf '" + path + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return path;
}

TEST(RuntimeDirTest, UnderXdgRuntimeDirWhenItIsOurs) {
  const std::string xdg = Fresh("xdg");
  ASSERT_EQ(::mkdir(xdg.c_str(), 0700), 0);
  ::setenv("XDG_RUNTIME_DIR", xdg.c_str(), 1);
  auto dir = RuntimeDir();
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, xdg + "/tunefleet");
  struct stat st;
  ASSERT_EQ(::stat(dir->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto sub = RuntimeSubdir("agent-gpu1");
  ASSERT_TRUE(sub.ok()) << sub.status();
  EXPECT_EQ(*sub, xdg + "/tunefleet/agent-gpu1");
  EXPECT_FALSE(RuntimeSubdir("../x").ok());
  ::unsetenv("XDG_RUNTIME_DIR");
  auto tmp = RuntimeDir();
  ASSERT_TRUE(tmp.ok()) << tmp.status();
  EXPECT_EQ(*tmp, "/tmp/tunefleet-" + std::to_string(::geteuid()));
}

TEST(RuntimeDirTest, RefusesWhatOthersCouldHaveMade) {
  // Open to others.
  const std::string open = Fresh("open");
  ASSERT_EQ(::mkdir(open.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  EXPECT_THAT(std::string(PrivateDir(open).message()), HasSubstr("has mode 0777"));
  // A link planted in its place.
  const std::string target = Fresh("target"), link = Fresh("link");
  ASSERT_EQ(::mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  EXPECT_THAT(std::string(PrivateDir(link).message()), HasSubstr("is a symbolic link"));
  // Another user's (only root can make one here).
  if (::geteuid() == 0) {
    const std::string theirs = Fresh("theirs");
    ASSERT_EQ(::mkdir(theirs.c_str(), 0700), 0);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    EXPECT_THAT(std::string(PrivateDir(theirs).message()), HasSubstr("belongs to uid 65534"));
  }
  // A file where the folder should be.
  const std::string file = Fresh("file");
  ASSERT_EQ(std::system(("touch '" + file + "'").c_str()), 0);
  EXPECT_THAT(std::string(PrivateDir(file).message()), HasSubstr("is not a folder"));
}

TEST(RuntimeDirTest, FilesAreOpenedWithoutFollowingLinks) {
  const std::string dir = Fresh("files");
  ASSERT_TRUE(PrivateDir(dir).ok());
  auto fd = OpenPrivateFile(dir + "/agent.lock", O_RDWR, /*create=*/true);
  ASSERT_TRUE(fd.ok()) << fd.status();
  struct stat st;
  ASSERT_EQ(::fstat(*fd, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::close(*fd);
  const std::string victim = dir + "/victim";
  ASSERT_EQ(std::system(("echo keep > '" + victim + "'").c_str()), 0);
  ASSERT_EQ(::symlink(victim.c_str(), (dir + "/planted").c_str()), 0);
  auto planted = OpenPrivateFile(dir + "/planted", O_RDWR | O_TRUNC, /*create=*/true);
  EXPECT_THAT(std::string(planted.status().message()), HasSubstr("is a symbolic link"));
  struct stat vs;
  ASSERT_EQ(::stat(victim.c_str(), &vs), 0);
  EXPECT_EQ(vs.st_size, 5);  // untouched
}

TEST(RuntimeDirTest, SafeNames) {
  EXPECT_TRUE(SafeName("gpu-node_01.rack2"));
  for (const char* bad : {"", ".", "..", "../x", "a/b", "a b", "x\n", "\x01"}) {
    EXPECT_FALSE(SafeName(bad)) << bad;
  }
  EXPECT_FALSE(SafeName(std::string(65, 'a')));
}

}  // namespace
}  // namespace tunefleet
