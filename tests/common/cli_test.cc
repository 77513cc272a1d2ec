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
using ::testing::Not;

struct Flags {
  std::string head;
  int64_t slots = 0;
  double ratio = 0.5;
  bool resume = false;
  bool dry_run = false;
  int64_t head_grace_s = 300;
};

CommandLine Make(Flags& f) {
  CommandLine cli("hpo sweep", "SWEEP.yaml [key=value ...]", "Runs a sweep.");
  cli.AddString("head", &f.head, "head address", "ADDR");
  cli.AddInt("slots", &f.slots, "slots");
  cli.AddDouble("ratio", &f.ratio, "ratio");
  cli.AddBool("resume", &f.resume, "resume");
  cli.AddBool("dry_run", &f.dry_run, "dry run");
  cli.AddInt("head_grace_s", &f.head_grace_s, "grace");
  cli.AllowOverrides();
  cli.ExpectPositional(1, 1);
  return cli;
}

TEST(CommandLineTest, ParsesAllForms) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--head=tcp://h:1", "--slots", "4", "x.yaml", "--resume", "train.lr=3e-5",
                         "-ratio=-0.25"})
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

TEST(CommandLineTest, DashesAreUnderscores) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"--dry-run", "--head-grace-s", "7", "x.yaml"}).ok());
  EXPECT_TRUE(f.dry_run);
  EXPECT_EQ(f.head_grace_s, 7);
  EXPECT_TRUE(cli.WasSet("dry_run"));
  EXPECT_TRUE(cli.WasSet("head-grace-s"));

  Flags g;
  CommandLine eq = Make(g);
  ASSERT_TRUE(eq.Parse({"--dry-run=true", "--head-grace_s=9", "x.yaml"}).ok());
  EXPECT_TRUE(g.dry_run);
  EXPECT_EQ(g.head_grace_s, 9);
  Flags h;
  ASSERT_TRUE(Make(h).Parse({"--dry-run=true", "--dry-run=false", "x.yaml"}).ok());
  EXPECT_FALSE(h.dry_run);
}

TEST(CommandLineTest, NegatedBoolWithDashesOrUnderscores) {
  for (const char* negated : {"--nodry_run", "--nodry-run", "--no-dry-run", "--no_dry_run"}) {
    Flags f;
    f.dry_run = true;
    CommandLine cli = Make(f);
    ASSERT_TRUE(cli.Parse({negated, "x.yaml"}).ok()) << negated;
    EXPECT_FALSE(f.dry_run) << negated;
    EXPECT_TRUE(cli.WasSet("dry_run")) << negated;
  }
  // Only bools negate; a negated non-bool is an unknown flag, named as typed.
  Flags f;
  EXPECT_EQ(Make(f).Parse({"--no-head-grace-s", "x"}).message(),
            "unknown flag --no-head-grace-s (see hpo sweep --help)");
}

TEST(CommandLineTest, UnknownDashedFlagIsNamedAsTyped) {
  Flags f;
  EXPECT_EQ(Make(f).Parse({"--dry-runn", "x"}).message(),
            "unknown flag --dry-runn (see hpo sweep --help)");
  EXPECT_EQ(Make(f).Parse({"--head-grace-s"}).message(), "--head-grace-s needs a value");
}

TEST(CommandLineTest, HelpShowsUnderscoresAndSaysDashesWorkOnce) {
  Flags f;
  std::string help = Make(f).Help();
  EXPECT_THAT(help, HasSubstr("--dry_run "));
  EXPECT_THAT(help, HasSubstr("--head_grace_s=N"));
  EXPECT_THAT(help, Not(HasSubstr("--head-grace-s=N")));
  const std::string note = "Flags take dashes for underscores too: --dry-run = --dry_run.";
  ASSERT_THAT(help, HasSubstr(note));
  EXPECT_EQ(help.find(note), help.rfind(note));
}

TEST(CommandLineTest, HydraRemovalIsAnOverride) {
  Flags f;
  CommandLine cli = Make(f);
  ASSERT_TRUE(cli.Parse({"x.yaml", "~early_terminate", "+a.b=1", "++c=2"}).ok());
  EXPECT_EQ(cli.positional(), std::vector<std::string>{"x.yaml"});
  Flags g;
  CommandLine path = Make(g);
  ASSERT_TRUE(path.Parse({"~/sweeps/x.yaml"}).ok());  // a path, not a removal
  EXPECT_EQ(path.positional(), std::vector<std::string>{"~/sweeps/x.yaml"});
  EXPECT_EQ(cli.overrides(), (std::vector<std::string>{"~early_terminate", "+a.b=1", "++c=2"}));
}

TEST(CommandLineTest, Errors) {
  Flags f;
  EXPECT_EQ(Make(f).Parse({"--bogus", "x"}).message(),
            "unknown flag --bogus (see hpo sweep --help)");
  EXPECT_EQ(Make(f).Parse({"--slots=four", "x"}).message(),
            "--slots expects an integer, got 'four'");
  EXPECT_EQ(Make(f).Parse({"x", "--slots"}).message(), "--slots needs a value");
  EXPECT_EQ(Make(f).Parse({"--resume=maybe", "x"}).message(),
            "--resume expects true or false, got 'maybe'");
  EXPECT_THAT(std::string(Make(f).Parse({}).message()), HasSubstr("missing argument"));
  EXPECT_THAT(std::string(Make(f).Parse({"a", "b"}).message()),
              HasSubstr("unexpected argument 'b'"));
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
