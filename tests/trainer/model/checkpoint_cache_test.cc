// The warm workers' checkpoint cache (trainer/model/checkpoint_cache.h): off by default, a hit
// returns exactly LoadBertCheckpoint's tensors (copies the caller may change), a different folder
// replaces the entry, and a weight file rewritten (contents, size, or only its mtime) or a
// changed config.json is read again.
#include "trainer/model/checkpoint_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/trainer/testing/trainer_test_util.h"
#include "trainer/io/safetensors.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kModel[] = "data/bert-tiny-random";  // sharded: an index and two files

void ExpectSameTensors(const std::map<std::string, torch::Tensor>& got,
                       const std::map<std::string, torch::Tensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_EQ(got.count(name), 1u) << name;
    const torch::Tensor& g = got.at(name);
    EXPECT_EQ(g.scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(g.is_contiguous()) << name;
    EXPECT_TRUE(torch::equal(g, t)) << name;
  }
}

// A fresh folder with the reference config.json and these tensors in model.safetensors.
std::string FolderWith(const std::string& name,
                       const std::map<std::string, torch::Tensor>& tensors) {
  const std::string dir = FreshTestDir(name);
  WriteTinyBertFolder(dir, tensors);
  return dir;
}

class CheckpointCacheTest : public ::testing::Test {
 protected:
  void SetUp() override { EnableCheckpointCache(true); }
  void TearDown() override { EnableCheckpointCache(false); }

  // Loads `dir` through the cache, expecting success; `hit` says which it was.
  BertCheckpoint Load(const std::string& dir, bool* hit) {
    auto c = LoadBertCheckpointCached(dir, hit);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(c).value() : BertCheckpoint{};
  }
};

TEST(CheckpointCacheOffTest, OffByDefaultReadsEveryTime) {
  ASSERT_FALSE(CheckpointCacheEnabled());
  for (int i = 0; i < 2; ++i) {
    bool hit = true;
    auto c = LoadBertCheckpointCached(kModel, &hit);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_FALSE(hit);
    ExpectSameTensors(c->tensors, TinyBertCheckpoint().tensors);
  }
}

TEST_F(CheckpointCacheTest, HitEqualsTheFilesAndHandsOutCopies) {
  bool hit = true;
  BertCheckpoint first = Load(kModel, &hit);
  EXPECT_FALSE(hit);
  ExpectSameTensors(first.tensors, TinyBertCheckpoint().tensors);
  EXPECT_EQ(first.weight_files, TinyBertCheckpoint().weight_files);
  // A trial trains its tensors in place: the cached copy must not see it.
  for (auto& [name, t] : first.tensors) t.add_(1.0);
  BertCheckpoint second = Load(kModel, &hit);
  EXPECT_TRUE(hit);
  ExpectSameTensors(second.tensors, TinyBertCheckpoint().tensors);
  EXPECT_EQ(second.config.hidden_size, TinyBertCheckpoint().config.hidden_size);
  EXPECT_EQ(second.has_pooler, TinyBertCheckpoint().has_pooler);
  EXPECT_EQ(second.missing_keys, TinyBertCheckpoint().missing_keys);
  EXPECT_EQ(second.unexpected_keys, TinyBertCheckpoint().unexpected_keys);
  for (const auto& [name, t] : second.tensors) {
    EXPECT_NE(t.data_ptr(), first.tensors.at(name).data_ptr()) << name;
  }
  // The same folder by another path (a symlink) is the same key.
  const std::string link = TestTempPath("checkpoint_cache_link");
  ::unlink(link.c_str());
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::symlink((std::string(cwd) + "/" + kModel).c_str(), link.c_str()), 0);
  BertCheckpoint third = Load(link, &hit);
  EXPECT_TRUE(hit);
  ExpectSameTensors(third.tensors, TinyBertCheckpoint().tensors);
}

TEST_F(CheckpointCacheTest, AnotherFolderReplacesTheEntry) {
  const std::string other = FolderWith("checkpoint_cache_other", TinyBertCheckpoint().tensors);
  bool hit = true;
  Load(kModel, &hit);
  EXPECT_FALSE(hit);
  ExpectSameTensors(Load(other, &hit).tensors, TinyBertCheckpoint().tensors);
  EXPECT_FALSE(hit);
  Load(other, &hit);
  EXPECT_TRUE(hit);
  Load(kModel, &hit);  // one entry at most: `other` replaced it
  EXPECT_FALSE(hit);
  Load(kModel, &hit);
  EXPECT_TRUE(hit);
  ClearCheckpointCache();
  Load(kModel, &hit);
  EXPECT_FALSE(hit);
}

TEST_F(CheckpointCacheTest, ChangedFilesAreReadAgain) {
  std::map<std::string, torch::Tensor> tensors = TinyBertCheckpoint().tensors;
  const std::string dir = FolderWith("checkpoint_cache_changed", tensors);
  const std::string weights = dir + "/model.safetensors";
  bool hit = true;
  Load(dir, &hit);
  EXPECT_FALSE(hit);
  Load(dir, &hit);
  EXPECT_TRUE(hit);

  // Same size, other values, rewritten in place (same inode): the mtime tells.
  const std::string name = "embeddings.word_embeddings.weight";
  tensors[name] = tensors[name] + 0.5;
  auto bytes = SerializeSafetensors(tensors);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->size(), ReadAll(weights).size());
  struct stat old_stat;
  ASSERT_EQ(::stat(weights.c_str(), &old_stat), 0);
  WriteAll(weights, *bytes);
  struct stat new_stat;
  ASSERT_EQ(::stat(weights.c_str(), &new_stat), 0);
  if (new_stat.st_mtim.tv_sec == old_stat.st_mtim.tv_sec &&
      new_stat.st_mtim.tv_nsec == old_stat.st_mtim.tv_nsec) {
    // A coarse filesystem clock gave the same time: move it on, as a later write would.
    struct timespec later[2] = {{0, UTIME_OMIT}, {old_stat.st_mtim.tv_sec + 1, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, weights.c_str(), later, 0), 0);
  }
  BertCheckpoint changed = Load(dir, &hit);
  EXPECT_FALSE(hit);
  ExpectSameTensors(changed.tensors, tensors);
  Load(dir, &hit);
  EXPECT_TRUE(hit);

  // Only the modification time changes.
  struct timespec times[2] = {{0, UTIME_OMIT}, {1'000'000'000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, weights.c_str(), times, 0), 0);
  Load(dir, &hit);
  EXPECT_FALSE(hit);

  // Another size: an extra tensor (an unexpected key).
  tensors["cls.predictions.bias"] = torch::zeros({4});
  ASSERT_TRUE(WriteSafetensors(weights, tensors).ok());
  BertCheckpoint bigger = Load(dir, &hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(bigger.unexpected_keys, std::vector<std::string>{"cls.predictions.bias"});

  // config.json is part of the key too.
  Load(dir, &hit);
  EXPECT_TRUE(hit);
  WriteAll(dir + "/config.json", ReadAll(dir + "/config.json") + "\n");
  Load(dir, &hit);
  EXPECT_FALSE(hit);
}

TEST_F(CheckpointCacheTest, ErrorsAreNotCached) {
  const std::string dir = FreshTestDir("checkpoint_cache_empty");
  bool hit = true;
  auto c = LoadBertCheckpointCached(dir, &hit);
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(hit);
  EXPECT_FALSE(LoadBertCheckpointCached(dir + "/absent", &hit).ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
