// The journal's folders (hpo/journal/journal_file.h, CheckJournalPath): a folder is no journal
// file; a relative path's folders are created below the working directory; an absolute path may
// miss only its own folder.
#include "hpo/journal/journal_file.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "hpo/journal/journal_replay.h"
#include "hpo/journal/journal_writer.h"
#include "tests/hpo/journal_fixture.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(JournalPathTest, AFolderIsNotAJournalFile) {
  const std::string dir = TestDir("folder");
  std::filesystem::create_directories(dir);
  for (const std::string& path : {dir, dir + "/"}) {
    const absl::Status s = CheckJournalPath(path);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_NE(s.message().find("is a folder, not a journal file"), std::string::npos) << s;
    EXPECT_NE(std::string(JournalWriter::Open(path).status().message()).find("is a folder"),
              std::string::npos);
    EXPECT_NE(std::string(ReadJournal(path).status().message()).find("is a folder"),
              std::string::npos);
  }
}

TEST(JournalPathTest, AnAbsolutePathMayMissOnlyItsOwnFolder) {
  const std::string base = TestDir("absolute");
  // base's parent exists: base itself may be created.
  ASSERT_TRUE(CheckJournalPath(base + "/j.log").ok());
  // base/a/b/j.log misses base and base/a too: refused, naming the first missing folder,
  // and nothing is created.
  const absl::Status deep = CheckJournalPath(base + "/a/b/j.log");
  EXPECT_EQ(deep.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(deep.message().find("no such folder: " + base + " "), std::string::npos) << deep;
  auto refused = JournalWriter::Open(base + "/a/b/j.log");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(base));
  EXPECT_NE(std::string(CheckJournalPath("/nonexistent-tunefleet/dir/j.log").message())
                .find("no such folder: /nonexistent-tunefleet "),
            std::string::npos);
  // Its own folder is created when its parent exists.
  auto opened = JournalWriter::Open(base + "/j.log");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE(std::filesystem::is_directory(base));
  // A file where a folder should be.
  EXPECT_NE(std::string(CheckJournalPath(base + "/j.log/x.log").message()).find("is not a folder"),
            std::string::npos);
}

TEST(JournalPathTest, ARelativePathGetsItsFoldersBelowTheWorkingDirectory) {
  const std::string base = TestDir("relative");
  std::filesystem::create_directories(base);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(::chdir(base.c_str()), 0);
  EXPECT_TRUE(CheckJournalPath("runs/a/b/journal.log").ok());
  EXPECT_FALSE(std::filesystem::exists(base + "/runs"));  // checking creates nothing
  {
    auto opened = JournalWriter::Open("runs/a/b/journal.log");
    EXPECT_TRUE(opened.ok()) << opened.status();
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(base + "/runs/a/b/journal.log"));
  // Climbing out of the working directory: as for an absolute path.
  const absl::Status climb = CheckJournalPath("../relative-missing/x/j.log");
  EXPECT_EQ(climb.code(), absl::StatusCode::kNotFound) << climb;
  EXPECT_NE(climb.message().find("no such folder: ../relative-missing"), std::string::npos);
  ASSERT_EQ(::chdir(cwd), 0);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
