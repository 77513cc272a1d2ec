// comm/content_hash: SHA-256 against FIPS 180-4 vectors on both code paths (SHA extensions and
// portable), split updates, files against sha256sum, and the folder hash: its documented
// format, independence from creation order and the folder's name, sensitivity to names,
// sizes, bytes and empty folders.
#include "comm/content_hash.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace comm {
namespace {

std::string Hex(const std::string& bytes, bool hardware) {
  Sha256 sha(hardware);
  sha.Update(bytes);
  return sha.FinalHex();
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

class Sha256Test : public ::testing::TestWithParam<bool> {};

TEST_P(Sha256Test, KnownVectors) {
  const bool hw = GetParam();
  EXPECT_EQ(Hex("", hw), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex("abc", hw), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hw),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                "klmnopqrlmnopqrsmnopqrstnopqrstu",
                hw),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Hex(std::string(1000000, 'a'), hw),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_P(Sha256Test, SplitUpdatesEqualOneShotAndBothPathsAgree) {
  const bool hw = GetParam();
  std::mt19937 rng(7);
  for (size_t n : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 127u, 128u, 1000u, 65537u}) {
    const std::string data = RandomBytes(n, static_cast<uint32_t>(n));
    Sha256 split(hw);
    size_t pos = 0;
    while (pos < n) {
      const size_t take = std::min<size_t>(n - pos, rng() % 150);
      split.Update(data.data() + pos, take);
      pos += take;
    }
    const std::string expected = Hex(data, /*hardware=*/false);
    EXPECT_EQ(split.FinalHex(), expected) << n << " bytes";
    EXPECT_EQ(Hex(data, hw), expected) << n << " bytes";
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, Sha256Test, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "HardwareWhereAvailable" : "Portable";
                         });

TEST(Sha256Test, ReportsHardware) {
  std::printf("SHA extensions on this CPU: %s\n", Sha256::HardwareAvailable() ? "yes" : "no");
}

TEST(ContentHashTest, IsContentHash) {
  EXPECT_TRUE(IsContentHash(Sha256Hex("x")));
  EXPECT_FALSE(IsContentHash(""));
  EXPECT_FALSE(IsContentHash(std::string(63, 'a')));
  EXPECT_FALSE(IsContentHash(std::string(64, 'A')));
  EXPECT_FALSE(IsContentHash(std::string(64, 'g')));
}

TEST(ContentHashTest, FileMatchesSha256sum) {
  const std::string dir = FreshTestDir("file_hash");
  const std::string path = JoinPath(dir, "random.bin");
  WriteFile(path, RandomBytes(3 * 1024 * 1024 + 17, 1));
  uint64_t size = 0;
  absl::StatusOr<std::string> hash = HashFile(path, &size);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_EQ(size, 3u * 1024 * 1024 + 17);
  FILE* p = ::popen(absl::StrCat("sha256sum '", path, "'").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char out[65] = {0};
  ASSERT_EQ(std::fread(out, 1, 64, p), 64u);
  ::pclose(p);
  EXPECT_EQ(*hash, std::string(out));
  EXPECT_EQ(*HashPath(path), *hash);

  absl::StatusOr<std::string> missing = HashFile(JoinPath(dir, "nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope"), absl::string_view::npos);
}

// Builds the same tree, creating entries in the given order.
void MakeTree(const std::string& root, bool reverse) {
  std::vector<std::pair<std::string, std::string>> files = {{"a.txt", "alpha\n"},
                                                            {"b/c.bin", RandomBytes(70000, 3)},
                                                            {"b/d/e.txt", ""},
                                                            {"b/d/f", "f"},
                                                            {"z", "last"}};
  std::vector<std::string> dirs = {"b", "b/d", "empty"};
  if (reverse) {
    std::reverse(files.begin(), files.end());
    std::reverse(dirs.begin(), dirs.end());
  }
  for (const std::string& d : dirs) ASSERT_TRUE(MakeDirs(JoinPath(root, d)).ok());
  for (const auto& [path, bytes] : files) WriteFile(JoinPath(root, path), bytes);
}

TEST(ContentHashTest, DirectoryHashIgnoresCreationOrderAndFolderName) {
  const std::string dir = FreshTestDir("dir_order");
  MakeTree(JoinPath(dir, "one"), false);
  MakeTree(JoinPath(dir, "two"), true);
  absl::StatusOr<std::string> one = HashDirectory(JoinPath(dir, "one"));
  absl::StatusOr<std::string> two = HashDirectory(JoinPath(dir, "two"));
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*one, *two);
  EXPECT_EQ(*HashPath(JoinPath(dir, "one")), *one);
}

TEST(ContentHashTest, DirectoryHashFollowsTheDocumentedFormat) {
  const std::string dir = FreshTestDir("dir_format");
  MakeTree(dir, false);
  std::vector<TreeEntry> entries;
  absl::StatusOr<std::string> hash = HashDirectory(dir, &entries);
  ASSERT_TRUE(hash.ok()) << hash.status();
  std::vector<std::string> paths;
  for (const TreeEntry& e : entries) paths.push_back(e.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"a.txt", "b", "b/c.bin", "b/d", "b/d/e.txt", "b/d/f",
                                             "empty", "z"}));
  std::string listing("tunefleet-dir-v1\0", 17);
  for (const TreeEntry& e : entries) {
    if (e.directory) {
      listing += std::string("d\0", 2) + e.path + std::string("\0", 1);
    } else {
      EXPECT_EQ(e.hash, *HashFile(JoinPath(dir, e.path)));
      listing += std::string("f\0", 2) + e.path + std::string("\0", 1) + std::to_string(e.size) +
                 std::string("\0", 1) + e.hash + std::string("\0", 1);
    }
  }
  EXPECT_EQ(*hash, Sha256Hex(listing));
}

TEST(ContentHashTest, DirectoryHashChangesWithContentNamesAndEmptyFolders) {
  const std::string dir = FreshTestDir("dir_changes");
  MakeTree(dir, false);
  const std::string base = *HashDirectory(dir);

  WriteFile(JoinPath(dir, "b/d/f"), "g");  // same size, other byte
  const std::string changed_byte = *HashDirectory(dir);
  EXPECT_NE(changed_byte, base);
  WriteFile(JoinPath(dir, "b/d/f"), "f");
  EXPECT_EQ(*HashDirectory(dir), base);

  ASSERT_TRUE(RenamePath(JoinPath(dir, "z"), JoinPath(dir, "y")).ok());
  EXPECT_NE(*HashDirectory(dir), base);
  ASSERT_TRUE(RenamePath(JoinPath(dir, "y"), JoinPath(dir, "z")).ok());

  ASSERT_TRUE(MakeDirs(JoinPath(dir, "empty/deeper")).ok());
  EXPECT_NE(*HashDirectory(dir), base);
  ASSERT_TRUE(RemoveTree(JoinPath(dir, "empty/deeper")).ok());
  EXPECT_EQ(*HashDirectory(dir), base);

  // A folder never hashes like a file with the same bytes as its listing.
  EXPECT_NE(*HashDirectory(dir), *HashFile(JoinPath(dir, "a.txt")));
}

TEST(ContentHashTest, FollowsSymlinksAndRefusesSpecialFiles) {
  const std::string dir = FreshTestDir("dir_links");
  const std::string real = FreshTestDir("dir_links_real");
  WriteFile(JoinPath(real, "x"), "data");
  ASSERT_EQ(::symlink(JoinPath(real, "x").c_str(), JoinPath(dir, "x").c_str()), 0);
  EXPECT_EQ(*HashDirectory(dir), *HashDirectory(real));

  ASSERT_EQ(::mkfifo(JoinPath(dir, "pipe").c_str(), 0600), 0);
  absl::StatusOr<std::string> h = HashDirectory(dir);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("pipe: not a regular file or folder"),
            absl::string_view::npos)
      << h.status();

  const std::string loop = FreshTestDir("dir_loop");
  ASSERT_EQ(::symlink(loop.c_str(), JoinPath(loop, "self").c_str()), 0);
  h = HashDirectory(loop);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("symbolic link"), absl::string_view::npos) << h.status();
}

}  // namespace
}  // namespace comm
}  // namespace tunefleet
