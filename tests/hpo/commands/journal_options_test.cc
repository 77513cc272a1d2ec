// The command lines of hpo status, best and report (hpo/commands/journal_options.h): fields,
// defaults, --help, and a bad flag as one line and exit 2.
#include "hpo/commands/journal_options.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

// Runs `from_flags` on `args`; returns its code and what it printed on stderr.
template <typename Options>
std::pair<int, std::string> Parse(const std::vector<std::string>& args, Options* o) {
  CaptureStderr();
  CaptureStdout();
  const int rc = Options::FromFlags(args, o);
  GetCapturedStdout();
  return {rc, GetCapturedStderr()};
}

void ExpectOneLineUsageError(const std::pair<int, std::string>& got, const std::string& program,
                             const std::string& text) {
  EXPECT_EQ(got.first, kExitUsage);
  EXPECT_THAT(got.second, HasSubstr(program + ": error: "));
  EXPECT_THAT(got.second, HasSubstr(text));
  EXPECT_EQ(std::count(got.second.begin(), got.second.end(), '\n'), 1) << got.second;
}

TEST(StatusOptionsTest, FieldsDefaultsAndChecks) {
  StatusOptions o;
  ASSERT_EQ(Parse({}, &o).first, -1);
  EXPECT_EQ(o.format, "table");
  EXPECT_TRUE(o.journal.empty() && o.sweep_file.empty());
  StatusOptions json;
  ASSERT_EQ(Parse({"s.yaml", "--journal", "j.log", "--format", "json"}, &json).first, -1);
  EXPECT_EQ(json.sweep_file, "s.yaml");
  EXPECT_EQ(json.journal, "j.log");
  EXPECT_EQ(json.format, "json");
  StatusOptions bad;
  ExpectOneLineUsageError(Parse({"--format", "csv"}, &bad), "hpo status",
                          "--format must be table or json");
  ExpectOneLineUsageError(Parse({"a.yaml", "b.yaml"}, &bad), "hpo status", "");
}

TEST(BestOptionsTest, JournalIsRequired) {
  BestOptions o;
  ExpectOneLineUsageError(Parse({}, &o), "hpo best", "--journal is required");
  ExpectOneLineUsageError(Parse({"--bogus"}, &o), "hpo best", "bogus");
  BestOptions ok;
  ASSERT_EQ(Parse({"--journal", "j.log"}, &ok).first, -1);
  EXPECT_EQ(ok.journal, "j.log");
}

TEST(ReportOptionsTest, FieldsAndHelp) {
  ReportOptions o;
  ASSERT_EQ(Parse({"s.yaml", "--output", "x.html"}, &o).first, -1);
  EXPECT_EQ(o.sweep_file, "s.yaml");
  EXPECT_EQ(o.output, "x.html");
  EXPECT_TRUE(o.journal.empty());
  ReportOptions help;
  CaptureStdout();
  EXPECT_EQ(ReportOptions::FromFlags({"--help"}, &help), kExitOk);
  EXPECT_THAT(GetCapturedStdout(), HasSubstr("self-contained HTML"));
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
