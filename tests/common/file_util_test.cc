// common/file_util.h on a real temporary tree: paths, mkdir -p, rm -rf (nested folders, a
// symbolic link removed without touching its target, a missing path), rename, sizes, errors
// naming the path, errno statuses, whole-file reads and atomic writes.
#include "common/file_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace {

std::string Tmp(const std::string& name) { return TestTempPath("file_util_test_" + name); }

TEST(FileUtil, Paths) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(BaseName("x/y/z.txt"), "z.txt");
  EXPECT_EQ(BaseName("z.txt"), "z.txt");
  EXPECT_EQ(BaseName("x/y/"), "y");
}

TEST(FileUtil, MakeRemoveRename) {
  const std::string root = Tmp("tree");
  ASSERT_TRUE(RemoveTree(root).ok());
  ASSERT_TRUE(MakeDirs(JoinPath(root, "a/b/c")).ok());
  EXPECT_TRUE(IsDir(JoinPath(root, "a/b/c")));
  EXPECT_TRUE(MakeDirs(JoinPath(root, "a/b/c")).ok());  // again: fine
  std::ofstream(JoinPath(root, "a/b/c/f.txt")) << "12345";
  std::ofstream(JoinPath(root, "a/g.txt")) << "x";
  auto size = FileSize(JoinPath(root, "a/b/c/f.txt"));
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 5u);

  // A link to a file outside the tree: removing the tree leaves the target.
  const std::string outside = Tmp("outside.txt");
  std::ofstream(outside) << "keep";
  ASSERT_EQ(::symlink(outside.c_str(), JoinPath(root, "a/link").c_str()), 0);

  ASSERT_TRUE(RenamePath(JoinPath(root, "a"), JoinPath(root, "moved")).ok());
  EXPECT_FALSE(PathExists(JoinPath(root, "a")));
  EXPECT_TRUE(IsFile(JoinPath(root, "moved/b/c/f.txt")));

  ASSERT_TRUE(RemoveTree(root).ok());
  EXPECT_FALSE(PathExists(root));
  EXPECT_TRUE(IsFile(outside));
  EXPECT_TRUE(RemoveTree(root).ok());  // missing: fine
}

TEST(FileUtil, ErrorsNameThePath) {
  const std::string missing = Tmp("missing/file");
  auto size = FileSize(missing);
  ASSERT_FALSE(size.ok());
  EXPECT_TRUE(absl::IsNotFound(size.status()));
  EXPECT_TRUE(absl::StrContains(size.status().message(), missing));
  const absl::Status r = RenamePath(missing, Tmp("elsewhere"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.message(), missing));
  // A file where a folder should be.
  const std::string file = Tmp("plain.txt");
  std::ofstream(file) << "x";
  const absl::Status m = MakeDirs(JoinPath(file, "sub"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.message(), file));
}

TEST(FileUtil, ErrnoStatusMapsCodes) {
  const absl::Status s = ErrnoStatus(ENOENT, "/x/y: cannot open");
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_EQ(s.message(), "/x/y: cannot open: No such file or directory");
  EXPECT_TRUE(absl::IsPermissionDenied(ErrnoStatus(EACCES, "a")));
  EXPECT_TRUE(absl::IsPermissionDenied(ErrnoStatus(EPERM, "a")));
  EXPECT_TRUE(absl::IsAlreadyExists(ErrnoStatus(EEXIST, "a")));
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoStatus(ENOSPC, "a")));
  EXPECT_TRUE(absl::IsResourceExhausted(ErrnoStatus(EDQUOT, "a")));
  EXPECT_TRUE(absl::IsInternal(ErrnoStatus(EIO, "a")));
}

TEST(FileUtil, ReadFile) {
  const std::string path = Tmp("read.bin");
  const std::string bytes("a\0b\nc", 5);
  std::ofstream(path, std::ios::binary) << bytes;
  auto read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, bytes);

  const std::string missing = Tmp("missing/read.bin");
  auto gone = ReadFile(missing);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(absl::IsNotFound(gone.status()));
  EXPECT_EQ(gone.status().message(), missing + ": cannot open: No such file or directory");
  // A folder opens but cannot be read.
  const std::string dir = Tmp("read_dir");
  ASSERT_TRUE(MakeDirs(dir).ok());
  auto folder = ReadFile(dir);
  ASSERT_FALSE(folder.ok());
  EXPECT_TRUE(absl::StrContains(folder.status().message(), dir + ": cannot read"));
}

TEST(FileUtil, WriteFileAtomically) {
  const std::string dir = Tmp("atomic");
  ASSERT_TRUE(RemoveTree(dir).ok());
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = JoinPath(dir, "f.json");
  const mode_t umask_before = ::umask(022);  // the default mode is 0666 less the umask
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ::umask(umask_before);
  ASSERT_TRUE(WriteFileAtomically(path, "second, longer").ok());
  EXPECT_EQ(*ReadFile(path), "second, longer");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_TRUE(WriteFileAtomically(path, "secret", 0600).ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Only the file itself is left: no temporary file.
  ASSERT_TRUE(RemoveTree(path).ok());
  EXPECT_TRUE(RemoveTree(dir).ok());

  // A missing folder: an error naming the path, nothing created.
  const std::string nowhere = JoinPath(dir, "no/such/f.json");
  const absl::Status s = WriteFileAtomically(nowhere, "x");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_TRUE(absl::StrContains(s.message(), nowhere));
  EXPECT_FALSE(PathExists(dir));
}

TEST(FileUtil, AtomicFileRemovesTheTemporaryWithoutCommit) {
  const std::string dir = Tmp("atomic_abort");
  ASSERT_TRUE(RemoveTree(dir).ok());
  ASSERT_TRUE(MakeDirs(dir).ok());
  const std::string path = JoinPath(dir, "f.bin");
  {
    AtomicFile file(path);
    ASSERT_TRUE(file.Open().ok());
    ASSERT_TRUE(file.Append("abc", 3).ok());
  }
  EXPECT_FALSE(PathExists(path));
  EXPECT_TRUE(::rmdir(dir.c_str()) == 0) << "a temporary file was left in " << dir;
}

}  // namespace
}  // namespace tunefleet
