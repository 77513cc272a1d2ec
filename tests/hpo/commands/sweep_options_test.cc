// hpo sweep's command line (hpo/commands/sweep_options.h): every flag reaches its field, the
// positional file and the overrides are kept in order, --help prints and exits 0, and a bad
// flag is one line and exit 2 before anything is read; the resume command quotes for the shell.
#include "hpo/commands/sweep_options.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

TEST(SweepOptionsTest, EveryFlagReachesItsField) {
  SweepOptions o;
  CaptureStdout();
  CaptureStderr();
  const int rc = SweepOptions::FromFlags({"lr.yaml",    "search.random.trials=4",
                                          "--head",     "tcp://h:5555",
                                          "--journal",  "j.log",
                                          "--keys",     "/nonexistent-keys",
                                          "--resume",   "--dry_run",
                                          "--multirun", "--slots",
                                          "3",          "--report_json",
                                          "r.json",     "--head_grace_s",
                                          "7",          "--max_failed_share",
                                          "0.25",       "lr=1,2"},
                                         &o);
  const std::string err = GetCapturedStderr();
  GetCapturedStdout();
  // The keys folder is checked (it must load): this one does not exist.
  EXPECT_EQ(rc, kExitUsage);
  EXPECT_THAT(err, HasSubstr("hpo sweep: error: "));
  EXPECT_THAT(err, HasSubstr("/nonexistent-keys"));

  SweepOptions ok;
  EXPECT_EQ(SweepOptions::FromFlags(
                {"lr.yaml", "search.random.trials=4", "--head", "tcp://h:5555", "--journal",
                 "j.log", "--resume", "--dry_run", "--multirun", "--slots", "3", "--report_json",
                 "r.json", "--head_grace_s", "7", "--max_failed_share", "0.25", "lr=1,2"},
                &ok),
            -1);
  EXPECT_EQ(ok.sweep_file, "lr.yaml");
  EXPECT_THAT(ok.overrides, ElementsAre("search.random.trials=4", "lr=1,2"));
  EXPECT_EQ(ok.head, "tcp://h:5555");
  EXPECT_EQ(ok.journal, "j.log");
  EXPECT_TRUE(ok.resume);
  EXPECT_TRUE(ok.dry_run);
  EXPECT_TRUE(ok.multirun);
  EXPECT_EQ(ok.slots, 3);
  EXPECT_EQ(ok.report_json, "r.json");
  EXPECT_EQ(ok.head_grace_s, 7);
  EXPECT_EQ(ok.max_failed_share, 0.25);
}

TEST(SweepOptionsTest, DefaultsAreDevModeAndAHalfFailedShare) {
  SweepOptions o;
  ASSERT_EQ(SweepOptions::FromFlags({"s.yaml"}, &o), -1);
  EXPECT_EQ(o.sweep_file, "s.yaml");
  EXPECT_TRUE(o.head.empty());
  EXPECT_TRUE(o.overrides.empty());
  EXPECT_FALSE(o.resume || o.dry_run || o.multirun);
  EXPECT_EQ(o.slots, 0);
  EXPECT_EQ(o.head_grace_s, 300);
  EXPECT_EQ(o.max_failed_share, 0.5);
}

TEST(SweepOptionsTest, HelpPrintsAndExitsZero) {
  SweepOptions o;
  CaptureStdout();
  const int rc = SweepOptions::FromFlags({"--help"}, &o);
  const std::string out = GetCapturedStdout();
  EXPECT_EQ(rc, kExitOk);
  EXPECT_THAT(out, HasSubstr("hpo sweep"));
  EXPECT_THAT(out, HasSubstr("--max_failed_share"));
  EXPECT_THAT(out, HasSubstr("130  interrupted"));
}

TEST(SweepOptionsTest, ABadFlagIsOneLineAndExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      {},                    // no sweep file
      {"a.yaml", "b.yaml"},  // two
      {"s.yaml", "--no_such_flag"},
      {"s.yaml", "--slots", "-1"},
      {"s.yaml", "--slots", "x"},
      {"s.yaml", "--head_grace_s", "-5"},
      {"s.yaml", "--max_failed_share", "1.5"},
      {"s.yaml", "--head", "udp://h:1"},
      {"s.yaml", "--keys", "/tmp"},  // --keys without --head
  };
  for (const std::vector<std::string>& args : bad) {
    SweepOptions o;
    CaptureStderr();
    const int rc = SweepOptions::FromFlags(args, &o);
    const std::string err = GetCapturedStderr();
    EXPECT_EQ(rc, kExitUsage) << ::testing::PrintToString(args);
    EXPECT_THAT(err, HasSubstr("hpo sweep: error: ")) << ::testing::PrintToString(args);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

TEST(SweepOptionsTest, ResumeCommandRepeatsWhatContinuesTheSweep) {
  SweepOptions o;
  o.sweep_file = "my sweep.yaml";
  o.overrides = {"search.random.trials=4", "name=it's"};
  o.multirun = true;
  o.journal = "runs/j.log";
  o.head = "tcp://h:5555";
  o.keys = "/k";
  o.slots = 9;       // not part of it
  o.dry_run = true;  // nor this
  EXPECT_EQ(o.ResumeCommand("hpo"),
            "hpo sweep 'my sweep.yaml' --multirun search.random.trials=4 'name=it'\\''s' "
            "--resume --journal runs/j.log --head tcp://h:5555 --keys /k");
  SweepOptions plain;
  plain.sweep_file = "s.yaml";
  EXPECT_EQ(plain.ResumeCommand("hpo"), "hpo sweep s.yaml --resume");
  // As the user runs hpo (hpo/invocation.h): under bazel run, or by the path typed.
  EXPECT_EQ(plain.ResumeCommand("bazel run //hpo --"), "bazel run //hpo -- sweep s.yaml --resume");
  EXPECT_EQ(plain.ResumeCommand(), HpoInvocation() + " sweep s.yaml --resume");
  EXPECT_EQ(ShellWord(""), "''");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
