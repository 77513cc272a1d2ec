#include "common/cli.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "common/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

struct Flags {
  std::string head;
  int64_t slots = 0;
  double ratio = 0.5;
  bool resume = false;
};

CommandLine Make(Flags& f) {
  CommandLine cli("hpo sweep", "SWEEP.yaml [key=value ...]", "Runs a sweep.");
  cli.AddString("head", &f.head, "head address", "ADDR");
  cli.AddInt("slots", &f.slots, "slots");
  cli.AddDouble("ratio", &f.ratio, "ratio");
  cli.AddBool("resume", &f.resume, "resume");
  cli.AllowOverrides();
  cli.ExpectPositional(1, 1);
  return cli;
}

TEST(CommandLineTest, ParsesAllForms) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--head=tcp://h:1", "--slots", "4", "x.yaml", "--resume",
                         "train.lr=3e-5", "-ratio=-0.25"})
                  .ok());
  EXPECT_EQ(f.head, "tcp://h:1");
  EXPECT_EQ(f.slots, 4);
  EXPECT_TRUE(f.resume);
  EXPECT_DOUBLE_EQ(f.ratio, -0.25);
  EXPECT_EQ(cli.positional(), std::vector<std::string>{"x.yaml"});
  EXPECT_EQ(cli.overrides(), std::vector<std::string>{"train.lr=3e-5"});
  EXPECT_TRUE(cli.WasSet("slots"));
}

TEST(CommandLineTest, NegatedBool) {
  Flags f;
  f.resume = true;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--noresume", "x.yaml"}).ok());
  EXPECT_FALSE(f.resume);
}

TEST(CommandLineTest, Errors) {
  Flags f;
  EXPECT_EQ(Make(f).Parse({"--bogus", "x"}).message(), "unknown flag --bogus (see hpo sweep --help)");
  EXPECT_EQ(Make(f).Parse({"--slots=four", "x"}).message(), "--slots expects an integer, got 'four'");
  EXPECT_EQ(Make(f).Parse({"x", "--slots"}).message(), "--slots needs a value");
  EXPECT_EQ(Make(f).Parse({"--resume=maybe", "x"}).message(), "--resume expects true or false, got 'maybe'");
  EXPECT_THAT(std::string(Make(f).Parse({}).message()), HasSubstr("missing argument"));
  EXPECT_THAT(std::string(Make(f).Parse({"a", "b"}).message()), HasSubstr("unexpected argument 'b'"));
}

TEST(CommandLineTest, ErrorsClipTheValuesTheyEcho) {
  Flags f;
  const std::string huge(5 << 20, 'x');  // 5 MB
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--" + huge, "x"},
                                             {"--slots=" + huge, "x"},
                                             {"--ratio", huge, "x"},
                                             {"--resume=" + huge, "x"},
                                             {"a", huge}}) {
    const std::string message(Make(f).Parse(args).message());
    EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
    EXPECT_THAT(message, HasSubstr("... (5242880 bytes)"));
  }
}

TEST(CommandLineTest, HelpListsFlags) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--help"}).ok());
  EXPECT_TRUE(cli.help_requested());
  std::string help = cli.Help();
  EXPECT_THAT(help, HasSubstr("Usage: hpo sweep [flags] SWEEP.yaml [key=value ...]"));
  EXPECT_THAT(help, HasSubstr("--head=ADDR"));
  EXPECT_THAT(help, HasSubstr("(default 0.5)"));
}

TEST(CommandLineTest, DoubleDashEndsFlags) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--", "--weird.yaml"}).ok());
  EXPECT_EQ(cli.positional(), std::vector<std::string>{"--weird.yaml"});
}

TEST(ParseOrExitTest, GoesOnAfterAGoodParse) {
  Flags f;
  CommandLine cli = Make(f);
  EXPECT_EQ(ParseOrExit(cli, {"sweep.yaml", "--resume"}, "hpo sweep"), -1);
  EXPECT_TRUE(f.resume);
}

TEST(ParseOrExitTest, HelpExitsZero) {
  Flags f;
  CommandLine cli = Make(f);
  testing::internal::CaptureStdout();
  EXPECT_EQ(ParseOrExit(cli, {"--help"}, "hpo sweep"), kExitOk);
  EXPECT_THAT(testing::internal::GetCapturedStdout(), HasSubstr("Usage: hpo sweep"));
}

TEST(ParseOrExitTest, BadFlagPrintsOneLineAndExitsTwo) {
  Flags f;
  CommandLine cli = Make(f);
  testing::internal::CaptureStderr();
  EXPECT_EQ(ParseOrExit(cli, {"sweep.yaml", "--bogus"}, "hpo sweep"), kExitUsage);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "hpo sweep: error: unknown flag --bogus (see hpo sweep --help)\n");
}

TEST(EnvIntTest, ReadsIntegersElseFallback) {
  ::unsetenv("TUNEFLEET_CLI_TEST_INT");
  EXPECT_EQ(EnvInt("TUNEFLEET_CLI_TEST_INT", 7), 7);
  ::setenv("TUNEFLEET_CLI_TEST_INT", "3", 1);
  EXPECT_EQ(EnvInt("TUNEFLEET_CLI_TEST_INT", 7), 3);
  ::setenv("TUNEFLEET_CLI_TEST_INT", "-1", 1);
  EXPECT_EQ(EnvInt("TUNEFLEET_CLI_TEST_INT", 7), -1);
  ::setenv("TUNEFLEET_CLI_TEST_INT", "x3", 1);
  EXPECT_EQ(EnvInt("TUNEFLEET_CLI_TEST_INT", 7), 7);
  ::unsetenv("TUNEFLEET_CLI_TEST_INT");
}

std::string CurrentDir() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof(buf)) != nullptr ? buf : "";
}

// What RunMain's `run` saw.
std::string g_run_dir, g_run_prefix;
int g_run_argc = 0;
int RecordRun(int argc, char** /*argv*/) {
  g_run_dir = CurrentDir();
  g_run_prefix = LogContextPrefix();
  g_run_argc = argc;
  return 5;
}

// Under `bazel run` a binary enters the user's directory and names itself before its work.
TEST(RunMainTest, EntersTheUsersDirectoryAndNamesTheRoleBeforeRunning) {
  const std::string start = CurrentDir();
  ::setenv("BUILD_WORKING_DIRECTORY", testing::TempDir().c_str(), 1);
  ::setenv("RANK", "3", 1);
  char arg0[] = "head", arg1[] = "--help";
  char* argv[] = {arg0, arg1, nullptr};
  EXPECT_EQ(RunMain("head", RecordRun, 2, argv), 5);
  EXPECT_EQ(g_run_dir, CurrentDir());
  EXPECT_NE(g_run_dir, start);
  EXPECT_EQ(g_run_prefix, "head");  // RANK is only a trainer's
  EXPECT_EQ(g_run_argc, 2);

  InitBinary("trainer", /*rank_from_env=*/true);
  EXPECT_EQ(LogContextPrefix(), "trainer rank=3");

  ::unsetenv("BUILD_WORKING_DIRECTORY");
  ::unsetenv("RANK");
  ASSERT_EQ(::chdir(start.c_str()), 0);
  InitBinary("", /*rank_from_env=*/true);  // no RANK: no rank
  EXPECT_EQ(LogContextPrefix(), "");
  EXPECT_EQ(CurrentDir(), start);
}

}  // namespace
}  // namespace tunefleet
