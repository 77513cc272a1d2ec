// common/file_util.h on a real temporary tree: paths, mkdir -p, rm -rf (nested folders, a
// symbolic link removed without touching its target, a missing path), rename, sizes, errors
// naming the path.
#include "common/file_util.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

std::string Tmp(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  return JoinPath(t != nullptr ? t : "/tmp", "file_util_test_" + name);
}

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

}  // namespace
}  // namespace tunefleet
