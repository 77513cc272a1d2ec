// MetricsLog (trainer/io/metrics_log.h): the lines Open/Append write, read back with nlohmann::json
// (ordered_json, to see that "step" comes first); non-finite values as null; each line flushed
// as it is appended; Open(path) truncating and Open(path, resume_step = S) keeping only the
// lines with step <= S and appending after them. Files live under TEST_TMPDIR.
#include "trainer/io/metrics_log.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/trainer/testing/trainer_test_util.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::ordered_json;

// A path under TEST_TMPDIR named after the running test.
std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : ::testing::TempDir().c_str()) + "/" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Parses `line`, failing the test if it is not a JSON object whose first key is "step".
Json ParseLine(const std::string& line) {
  const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(j.is_object()) << line;
  if (!j.is_object() || j.empty()) return Json::object();
  EXPECT_EQ(j.begin().key(), "step") << line;
  EXPECT_TRUE(j["step"].is_number_integer()) << line;
  return j;
}

std::vector<int64_t> Steps(const std::string& path) {
  std::vector<int64_t> steps;
  for (const std::string& line : ReadLines(path)) {
    steps.push_back(ParseLine(line)["step"].get<int64_t>());
  }
  return steps;
}

// Writes a fresh log at `path`, a line {"loss": 1.0} for each of `steps` in turn, and closes it.
void WriteSteps(const std::string& path, const std::vector<int64_t>& steps) {
  MetricsLog log;
  ASSERT_TRUE(log.Open(path).ok());
  for (int64_t s : steps) ASSERT_TRUE(log.Append(s, {{"loss", 1.0}}).ok());
}

TEST(MetricsLogTest, WritesJsonLinesStepFirst) {
  const std::string path = TempPath("metrics.jsonl");
  {
    MetricsLog log;
    ASSERT_TRUE(log.Open(path).ok());
    EXPECT_EQ(log.path(), path);
    ASSERT_TRUE(log.Append(3, {{"loss", 0.5}, {"lr", 2e-5}, {"accuracy", 0.875}}).ok());
    ASSERT_TRUE(log.Append(10, {{"loss", 0.123456789}, {"grad_norm", 12345.678}}).ok());
    ASSERT_TRUE(log.Append(11, {}).ok());
  }
  const std::string text = ReadAll(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const std::vector<std::string> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 3u) << text;

  const Json a = ParseLine(lines[0]);
  EXPECT_EQ(a.size(), 4u) << lines[0];
  EXPECT_EQ(a["step"].get<int64_t>(), 3);
  EXPECT_EQ(a["loss"].get<double>(), 0.5);
  EXPECT_NEAR(a["lr"].get<double>(), 2e-5, 2e-5 * 1e-8);
  EXPECT_EQ(a["accuracy"].get<double>(), 0.875);

  const Json b = ParseLine(lines[1]);
  EXPECT_EQ(b["step"].get<int64_t>(), 10);
  EXPECT_NEAR(b["loss"].get<double>(), 0.123456789, 1e-9);
  EXPECT_NEAR(b["grad_norm"].get<double>(), 12345.678, 1e-4);

  const Json c = ParseLine(lines[2]);
  EXPECT_EQ(c.size(), 1u) << lines[2];
  EXPECT_EQ(c["step"].get<int64_t>(), 11);
}

// "samples" (an integer, exact past 2^53) follows "step" when given, and only then.
TEST(MetricsLogTest, SamplesFollowStepAsAnInteger) {
  const std::string path = TempPath("metrics.jsonl");
  {
    MetricsLog log;
    ASSERT_TRUE(log.Open(path).ok());
    ASSERT_TRUE(log.Append(5, {{"loss", 0.5}}, /*samples=*/80).ok());
    ASSERT_TRUE(log.Append(6, {{"loss", 0.5}}, /*samples=*/(int64_t{1} << 53) + 1).ok());
    ASSERT_TRUE(log.Append(7, {{"loss", 0.5}}).ok());
  }
  const std::vector<std::string> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 3u);
  const Json a = ParseLine(lines[0]);
  ASSERT_GE(a.size(), 2u);
  EXPECT_EQ(std::next(a.begin()).key(), "samples") << lines[0];
  EXPECT_TRUE(a["samples"].is_number_integer()) << lines[0];
  EXPECT_EQ(a["samples"].get<int64_t>(), 80);
  EXPECT_EQ(ParseLine(lines[1])["samples"].get<int64_t>(), (int64_t{1} << 53) + 1);
  EXPECT_FALSE(ParseLine(lines[2]).contains("samples")) << lines[2];
}

TEST(MetricsLogTest, NonFiniteIsNull) {
  const std::string path = TempPath("metrics.jsonl");
  MetricsLog log;
  ASSERT_TRUE(log.Open(path).ok());
  ASSERT_TRUE(log.Append(1, {{"loss", std::numeric_limits<double>::quiet_NaN()},
                             {"grad_norm", std::numeric_limits<double>::infinity()},
                             {"neg", -std::numeric_limits<double>::infinity()},
                             {"lr", 1e-3}})
                  .ok());
  const std::vector<std::string> lines = ReadLines(path);
  ASSERT_EQ(lines.size(), 1u);
  const Json j = ParseLine(lines[0]);
  EXPECT_TRUE(j["loss"].is_null()) << lines[0];
  EXPECT_TRUE(j["grad_norm"].is_null()) << lines[0];
  EXPECT_TRUE(j["neg"].is_null()) << lines[0];
  EXPECT_NEAR(j["lr"].get<double>(), 1e-3, 1e-12);
}

TEST(MetricsLogTest, KeysAreEscaped) {
  const std::string key = "eval/\"quoted\" \\ key";
  const Json j = ParseLine(MetricsLine(4, {{key, 1.5}}));
  EXPECT_EQ(j["step"].get<int64_t>(), 4);
  ASSERT_TRUE(j.contains(key)) << MetricsLine(4, {{key, 1.5}});
  EXPECT_EQ(j[key].get<double>(), 1.5);
}

TEST(MetricsLogTest, MetricsLineIsWhatAppendWrites) {
  const std::string path = TempPath("metrics.jsonl");
  const std::map<std::string, double> values = {{"loss", 0.25}, {"lr", 3e-5}};
  MetricsLog log;
  ASSERT_TRUE(log.Open(path).ok());
  ASSERT_TRUE(log.Append(9, values).ok());
  EXPECT_EQ(ReadAll(path), MetricsLine(9, values) + "\n");
  EXPECT_EQ(MetricsLine(9, values).find('\n'), std::string::npos);
}

TEST(MetricsLogTest, EachLineIsFlushedWhileOpen) {
  const std::string path = TempPath("metrics.jsonl");
  MetricsLog log;
  ASSERT_TRUE(log.Open(path).ok());
  ASSERT_TRUE(log.Append(1, {{"loss", 1.0}}).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{1}));
  ASSERT_TRUE(log.Append(2, {{"loss", 0.9}}).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{1, 2}));
}

TEST(MetricsLogTest, OpenWithoutResumeTruncates) {
  const std::string path = TempPath("metrics.jsonl");
  WriteSteps(path, {1, 2, 3});
  MetricsLog log;
  ASSERT_TRUE(log.Open(path).ok());
  EXPECT_EQ(ReadAll(path), "");
  ASSERT_TRUE(log.Append(7, {{"loss", 1.0}}).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{7}));
}

TEST(MetricsLogTest, ResumeKeepsStepsUpToResumeStepAndAppends) {
  const std::string path = TempPath("metrics.jsonl");
  {
    MetricsLog log;
    ASSERT_TRUE(log.Open(path).ok());
    for (int64_t s = 1; s <= 6; ++s) {
      ASSERT_TRUE(log.Append(s, {{"loss", 1.0 / static_cast<double>(s)}}).ok());
    }
  }
  const std::vector<std::string> before = ReadLines(path);
  ASSERT_EQ(before.size(), 6u);
  MetricsLog log;
  ASSERT_TRUE(log.Open(path, /*resume_step=*/3).ok());
  // The kept lines are unchanged, the later ones gone.
  EXPECT_EQ(ReadLines(path), (std::vector<std::string>(before.begin(), before.begin() + 3)));
  ASSERT_TRUE(log.Append(4, {{"loss", 0.2}}).ok());
  ASSERT_TRUE(log.Append(5, {{"loss", 0.1}}).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  const std::vector<std::string> after = ReadLines(path);
  ASSERT_EQ(after.size(), 5u);
  EXPECT_EQ(ParseLine(after[3])["loss"].get<double>(), 0.2);
}

// Lines are kept by their step, not their position (an eval line may come after later steps).
TEST(MetricsLogTest, ResumeFiltersByStepValue) {
  const std::string path = TempPath("metrics.jsonl");
  WriteSteps(path, {1, 2, 5, 3, 4, 2});
  MetricsLog log;
  ASSERT_TRUE(log.Open(path, /*resume_step=*/2).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{1, 2, 2}));
}

TEST(MetricsLogTest, ResumeAtZeroKeepsStepZeroOnly) {
  const std::string path = TempPath("metrics.jsonl");
  WriteSteps(path, {0, 1, 2});
  MetricsLog log;
  ASSERT_TRUE(log.Open(path, /*resume_step=*/0).ok());
  EXPECT_EQ(Steps(path), (std::vector<int64_t>{0}));
}

TEST(MetricsLogTest, AppendBeforeOpenFails) {
  MetricsLog log;
  EXPECT_FALSE(log.Append(1, {{"loss", 1.0}}).ok());
}

TEST(MetricsLogTest, OpenInMissingFolderFails) {
  MetricsLog log;
  EXPECT_FALSE(log.Open(TempPath("no_such_folder") + "/metrics.jsonl").ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
