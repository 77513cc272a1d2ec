// launcher/agent/metrics_follower.h: a program's reports file, line by line, as Reports: what
// a line may hold, lines split across reads, the last line without its newline, warnings that
// name the line, a file cut shorter, lines too long.
#include "launcher/agent/metrics_follower.h"

#include <cmath>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

TEST(ParseReportLineTest, StepSamplesAndNumbers) {
  auto r = ParseReportLine(
      R"({"step": 100, "samples": 3200, "eval/spearman": 0.71, "loss": 1, "tag": "x", "ok": true, "n": null})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->step(), 100);
  EXPECT_EQ(r->samples(), 3200);
  EXPECT_EQ(r->metrics_size(), 2);  // strings, booleans and nulls are not metrics
  EXPECT_EQ(r->metrics().at("eval/spearman"), 0.71);
  EXPECT_EQ(r->metrics().at("loss"), 1.0);
  EXPECT_FALSE(r->final());
}

TEST(ParseReportLineTest, TheResourceAxisIsSamplesElseStep) {
  EXPECT_EQ(ParseReportLine(R"({"step": 7, "m": 1})")->samples(), 7);
  auto only_samples = ParseReportLine(R"({"samples": 640, "m": 1})");
  EXPECT_EQ(only_samples->samples(), 640);
  EXPECT_EQ(only_samples->step(), 640);
  EXPECT_EQ(ParseReportLine(R"({"step": 3.0, "m": 1})")->step(), 3);  // a whole float
}

TEST(ParseReportLineTest, NonFiniteValuesAsPythonWritesThem) {
  auto r = ParseReportLine(R"({"step": 1, "loss": NaN, "up": Infinity, "down": -Infinity})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isnan(r->metrics().at("loss")));
  EXPECT_EQ(r->metrics().at("up"), INFINITY);
  EXPECT_EQ(r->metrics().at("down"), -INFINITY);
}

TEST(ParseReportLineTest, RefusedLinesSayWhy) {
  EXPECT_EQ(ParseReportLine(R"({"loss": 1})").status().message(), "has neither step nor samples");
  EXPECT_EQ(ParseReportLine("[1, 2]").status().message(), "not a JSON object");
  EXPECT_EQ(ParseReportLine(R"({"step": -1})").status().message(), "'step' is not an integer >= 0");
  EXPECT_EQ(ParseReportLine(R"({"step": 1.5})").status().message(),
            "'step' is not an integer >= 0");
  EXPECT_EQ(ParseReportLine(R"({"step": "1"})").status().message(),
            "'step' is not an integer >= 0");
  EXPECT_EQ(ParseReportLine(R"({"samples": 1e30})").status().message(),
            "'samples' is not an integer >= 0");
  EXPECT_TRUE(
      absl::StartsWith(ParseReportLine("epoch 1 done").status().message(), "not valid JSON"));
}

class MetricsFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = FreshTestDir("metrics_follower") + "/reports.jsonl";
    std::ofstream(path_).flush();
    auto f = MetricsFollower::Open(path_);
    ASSERT_TRUE(f.ok()) << f.status();
    follower_ = std::move(*f);
  }
  void Append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }

  std::string path_;
  std::unique_ptr<MetricsFollower> follower_;
};

TEST_F(MetricsFollowerTest, CompleteLinesOnlyUntilTheEnd) {
  EXPECT_TRUE(follower_->Poll(false).reports.empty());
  Append("{\"step\": 1, \"m\": 0.5}\n{\"step\": 2, ");
  MetricsFollower::Lines lines = follower_->Poll(false);
  ASSERT_EQ(lines.reports.size(), 1u);
  EXPECT_EQ(lines.reports[0].step(), 1);
  Append("\"m\": 0.6}\n{\"step\": 3, \"m\": 0.7}");  // the last line has no newline yet
  lines = follower_->Poll(false);
  ASSERT_EQ(lines.reports.size(), 1u);
  EXPECT_EQ(lines.reports[0].metrics().at("m"), 0.6);
  lines = follower_->Poll(/*at_end=*/true);  // the program has exited: it counts
  ASSERT_EQ(lines.reports.size(), 1u);
  EXPECT_EQ(lines.reports[0].step(), 3);
  EXPECT_TRUE(follower_->Poll(true).reports.empty());
  EXPECT_TRUE(lines.warnings.empty());
}

TEST_F(MetricsFollowerTest, ABadLineIsWarnedAboutByItsNumberAndTheRestGoOn) {
  Append("{\"step\": 1, \"m\": 1}\n\nepoch 1 done\n{\"loss\": 2}\n{\"step\": 5, \"m\": 2}\n");
  MetricsFollower::Lines lines = follower_->Poll(false);
  ASSERT_EQ(lines.reports.size(), 2u);
  EXPECT_EQ(lines.reports[1].step(), 5);
  ASSERT_EQ(lines.warnings.size(), 2u);
  // The blank line 2 is skipped silently but counted.
  EXPECT_TRUE(absl::StartsWith(lines.warnings[0], "TUNEFLEET_METRICS line 3: not valid JSON"))
      << lines.warnings[0];
  EXPECT_TRUE(absl::EndsWith(lines.warnings[0], ": 'epoch 1 done'; skipped")) << lines.warnings[0];
  EXPECT_EQ(lines.warnings[1],
            "TUNEFLEET_METRICS line 4: has neither step nor samples: '{\"loss\": 2}'; skipped");
}

TEST_F(MetricsFollowerTest, WarningsStopAfterTheFirstFew) {
  std::string bad;
  for (int i = 0; i < kMaxWarnings + 5; ++i) bad += "x\n";
  Append(bad + "{\"step\": 1, \"m\": 1}\n");
  MetricsFollower::Lines lines = follower_->Poll(false);
  EXPECT_EQ(lines.reports.size(), 1u);
  ASSERT_EQ(lines.warnings.size(), static_cast<size_t>(kMaxWarnings) + 1);
  EXPECT_EQ(lines.warnings.back(),
            "TUNEFLEET_METRICS: further bad lines are skipped without a word");
}

TEST_F(MetricsFollowerTest, AFileCutShorterIsReadAgain) {
  Append("{\"step\": 1, \"m\": 1}\n{\"step\": 2, \"m\": 2}\n");
  EXPECT_EQ(follower_->Poll(false).reports.size(), 2u);
  std::ofstream(path_, std::ios::trunc) << "{\"step\": 9, \"m\": 3}\n";  // reopened with "w"
  MetricsFollower::Lines lines = follower_->Poll(false);
  ASSERT_EQ(lines.reports.size(), 1u);
  EXPECT_EQ(lines.reports[0].step(), 9);
}

TEST_F(MetricsFollowerTest, ALineTooLongIsSkippedOnce) {
  Append("{\"step\": 1, \"pad\": \"" + std::string(kMaxLineBytes + 10, 'a') + "\"}\n");
  Append("{\"step\": 2, \"m\": 1}\n");
  MetricsFollower::Lines lines = follower_->Poll(false);
  ASSERT_EQ(lines.reports.size(), 1u);
  EXPECT_EQ(lines.reports[0].step(), 2);
  ASSERT_EQ(lines.warnings.size(), 1u);
  EXPECT_EQ(lines.warnings[0], "TUNEFLEET_METRICS line 1: longer than 64 KiB; skipped");
}

TEST_F(MetricsFollowerTest, APollReadsABoundedAmountWhileTheProgramRuns) {
  const std::string line = "{\"step\": 1, \"m\": 1}\n";
  std::string many;
  while (many.size() < kMaxPollBytes + 2 * 65536) many += line;
  Append(many);
  const size_t lines = many.size() / line.size();
  const size_t first = follower_->Poll(false).reports.size();
  EXPECT_LT(first, lines);
  EXPECT_GE(first * line.size(), kMaxPollBytes - line.size());
  EXPECT_EQ(first + follower_->Poll(/*at_end=*/true).reports.size(), lines);  // all of the rest
}

TEST(MetricsFollowerOpenTest, AMissingFileIsAnError) {
  auto f = MetricsFollower::Open(TestTempPath("no-such-dir") + "/reports.jsonl");
  EXPECT_FALSE(f.ok());
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
