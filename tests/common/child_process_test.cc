// common/child_process.h with /bin/sh children: the environment, its own process group, exit
// bookkeeping, an exec failure reported by Start, stderr into the log and the tail, inherited
// stdio, graceful-then-hard stops (one child, several under one grace, cut short), the whole
// group killed, the parent-death signal; and common/signals.h's SignalLatch.
#include "common/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/signals.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util/temp_dir.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

ProcessSpec Shell(const std::string& script) {
  ProcessSpec spec;
  spec.binary = "/bin/sh";
  spec.args = {"-c", script};
  return spec;
}

std::unique_ptr<ChildProcess> StartOrDie(const ProcessSpec& spec) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  EXPECT_TRUE(child.ok()) << child.status();
  return child.ok() ? std::move(*child) : nullptr;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// True once `pid` is gone (or a zombie) within `timeout`.
bool GoneWithin(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z') {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

TEST(ChildProcessTest, RunsWithItsEnvironmentAndReportsItsExit) {
  ProcessSpec spec = Shell("test \"$TF_CHILD_TEST\" = yes || exit 99; exit 7");
  spec.env["TF_CHILD_TEST"] = "yes";
  std::unique_ptr<ChildProcess> child = StartOrDie(spec);
  ASSERT_NE(child, nullptr);
  child->Wait();
  EXPECT_TRUE(child->exited());
  EXPECT_FALSE(child->succeeded());
  EXPECT_EQ(child->exit_code(), 7);
  EXPECT_EQ(child->term_signal(), 0);
  EXPECT_EQ(child->ShellExitCode(), 7);
  EXPECT_EQ(child->DescribeExit(), "exit code 7");
  EXPECT_EQ(child->HowItEnded(), "exited with exit code 7");
}

TEST(ChildProcessTest, LeadsItsOwnProcessGroupAndReapsWithoutBlocking) {
  std::unique_ptr<ChildProcess> child = StartOrDie(Shell("exec sleep 30"));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(::getpgid(child->pid()), child->pid());
  EXPECT_FALSE(child->Reap());  // still running
  child->Signal(SIGKILL);
  child->Wait();
  EXPECT_TRUE(child->Reap());
  EXPECT_EQ(child->term_signal(), SIGKILL);
  EXPECT_EQ(child->ShellExitCode(), 128 + SIGKILL);
  EXPECT_EQ(child->HowItEnded(), "was killed by signal 9 (Killed)");
}

TEST(ChildProcessTest, AnExecFailureIsStartsOwnError) {
  ProcessSpec spec;
  spec.binary = "/nonexistent/tunefleet-binary";
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(child.status().message(),
              HasSubstr("cannot run /nonexistent/tunefleet-binary: No such file or directory"));
}

TEST(ChildProcessTest, StartsInItsWorkingDirectory) {
  const std::string dir = FreshTestDir("child_process_cwd");
  ProcessSpec spec = Shell("pwd > where.txt");
  spec.working_dir = dir;
  std::unique_ptr<ChildProcess> child = StartOrDie(spec);
  ASSERT_NE(child, nullptr);
  child->Wait();
  EXPECT_TRUE(child->succeeded());
  EXPECT_EQ(ReadFile(dir + "/where.txt"), dir + "\n");
  spec.working_dir = dir + "/missing";
  absl::StatusOr<std::unique_ptr<ChildProcess>> failed = ChildProcess::Start(spec);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(),
            "cannot start /bin/sh in " + dir + "/missing: No such file or directory");
}

TEST(ChildProcessTest, FindProgramAsExecvpDoes) {
  const std::string dir = FreshTestDir("child_process_find");
  EXPECT_EQ(FindProgram("sh", "/nowhere:/bin").value(), "/bin/sh");
  EXPECT_EQ(FindProgram("sh", "").value(), "/usr/bin/sh");  // the default PATH
  EXPECT_EQ(FindProgram("no-such-tool", "/bin:/usr/bin").status().message(),
            "no-such-tool: not found on PATH (/bin:/usr/bin)");
  EXPECT_EQ(FindProgram("/bin/sh", "").value(), "/bin/sh");
  std::ofstream(dir + "/run.sh") << "#!/bin/sh\n";
  EXPECT_EQ(FindProgram("./run.sh", "/bin", dir).status().message(), "./run.sh: not executable");
  ASSERT_EQ(::chmod((dir + "/run.sh").c_str(), 0755), 0);
  EXPECT_EQ(FindProgram("./run.sh", "/bin", dir).value(), dir + "/./run.sh");
  // A name without a slash is never taken from the working directory.
  EXPECT_FALSE(FindProgram("run.sh", "/bin", dir).ok());
  EXPECT_EQ(FindProgram("./gone.sh", "/bin", dir).status().message(),
            "./gone.sh: No such file or directory");
}

TEST(ChildProcessTest, StderrGoesToTheLogAndTheTail) {
  const std::string dir = FreshTestDir("child_process_log");
  ProcessSpec spec = Shell("echo to-stdout; echo to-stderr >&2; exit 0");
  spec.log_path = dir + "/sub/child.log";  // its folder is made
  std::unique_ptr<ChildProcess> child = StartOrDie(spec);
  ASSERT_NE(child, nullptr);
  ASSERT_GE(child->stderr_fd(), 0);
  while (child->stderr_fd() >= 0) {
    child->DrainStderr();
    absl::SleepFor(absl::Milliseconds(5));
  }
  child->Wait();
  EXPECT_TRUE(child->succeeded());
  EXPECT_EQ(child->StderrTail(), "to-stderr\n");
  const std::string log = ReadFile(spec.log_path);
  EXPECT_THAT(log, HasSubstr("to-stdout\n"));
  EXPECT_THAT(log, HasSubstr("to-stderr\n"));
}

TEST(ChildProcessTest, CapturedStdoutIsKeptWholeAndApartFromStderr) {
  // More than a pipe holds (64 KiB), so the child blocks unless both pipes are drained.
  ProcessSpec spec =
      Shell("head -c 200000 /dev/zero | tr '\\0' x; echo; echo to-stderr >&2; exit 3");
  spec.capture_stdout = true;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  ASSERT_TRUE(child.ok()) << child.status();
  (*child)->DrainUntilClosed();
  (*child)->Wait();
  EXPECT_EQ((*child)->captured_stdout(), std::string(200000, 'x') + "\n");
  EXPECT_EQ((*child)->StderrTail(), "to-stderr\n");
  EXPECT_EQ((*child)->exit_code(), 3);
}

TEST(ChildProcessTest, InheritedStdioWritesToTheParentsStreams) {
  const std::string dir = FreshTestDir("child_process_stdio");
  const std::string out = dir + "/parent-stderr";
  // The parent's stderr, for this test, is a file.
  const int saved = ::dup(STDERR_FILENO);
  FILE* file = std::fopen(out.c_str(), "w");
  ASSERT_NE(file, nullptr);
  ::dup2(::fileno(file), STDERR_FILENO);
  ProcessSpec spec = Shell("echo inherited >&2");
  spec.inherit_stdio = true;
  std::unique_ptr<ChildProcess> child = StartOrDie(spec);
  if (child != nullptr) child->Wait();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(file);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->stderr_fd(), -1);  // no pipe
  EXPECT_TRUE(child->succeeded());
  EXPECT_EQ(ReadFile(out), "inherited\n");
}

TEST(ChildProcessTest, StopEndsAChildThatHeedsSigtermWithoutWaitingOutTheGrace) {
  std::unique_ptr<ChildProcess> child = StartOrDie(Shell("exec sleep 30"));
  ASSERT_NE(child, nullptr);
  const absl::Time start = absl::Now();
  child->Stop(absl::Seconds(20));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(child->term_signal(), SIGTERM);
}

TEST(ChildProcessTest, StopKillsAChildThatIgnoresSigtermAfterTheGrace) {
  std::unique_ptr<ChildProcess> child =
      StartOrDie(Shell("trap '' TERM; while :; do sleep 0.05; done"));
  ASSERT_NE(child, nullptr);
  absl::SleepFor(absl::Milliseconds(100));  // the trap is set
  const absl::Time start = absl::Now();
  child->Stop(absl::Milliseconds(400));
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(400));
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_EQ(child->term_signal(), SIGKILL);
}

TEST(ChildProcessTest, StopReachesTheWholeGroup) {
  const std::string dir = FreshTestDir("child_process_group");
  const std::string pid_file = dir + "/grandchild.pid";
  std::unique_ptr<ChildProcess> child =
      StartOrDie(Shell("sleep 30 & echo $! > " + pid_file + "; wait"));
  ASSERT_NE(child, nullptr);
  pid_t grandchild = 0;
  for (int i = 0; i < 250 && grandchild == 0; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
    grandchild = static_cast<pid_t>(std::atoi(ReadFile(pid_file).c_str()));
  }
  ASSERT_GT(grandchild, 0);
  child->Stop(absl::Seconds(5));
  EXPECT_TRUE(GoneWithin(grandchild, absl::Seconds(5)));
}

TEST(ChildProcessTest, StopAllSharesOneGraceAndACutShortEndsItAtOnce) {
  std::unique_ptr<ChildProcess> a = StartOrDie(Shell("trap '' TERM; while :; do sleep 0.05; done"));
  std::unique_ptr<ChildProcess> b = StartOrDie(Shell("exec sleep 30"));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  absl::SleepFor(absl::Milliseconds(100));
  int asked = 0;
  const absl::Time start = absl::Now();
  // A second Ctrl-C, say, on the third look: a is killed long before its 60 s grace.
  StopAll({a.get(), nullptr, b.get()}, absl::Seconds(60), [&] { return ++asked >= 3; });
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_GE(asked, 3);
  EXPECT_EQ(a->term_signal(), SIGKILL);
  EXPECT_EQ(b->term_signal(), SIGTERM);
}

TEST(ChildProcessTest, TheChildDiesWithItsParent) {
  // A helper process starts a child and exits; the child gets PR_SET_PDEATHSIG's SIGKILL. This
  // process is the subreaper, so the orphan comes to it and its end can be read.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::close(fds[0]);
    absl::StatusOr<std::unique_ptr<ChildProcess>> child =
        ChildProcess::Start(Shell("exec sleep 30"));
    const pid_t pid = child.ok() ? (*child)->pid() : -1;
    ssize_t ignored = ::write(fds[1], &pid, sizeof(pid));
    (void)ignored;
    _exit(0);  // no destructor: the kernel ends the child
  }
  ::close(fds[1]);
  pid_t orphan = -1;
  ASSERT_EQ(::read(fds[0], &orphan, sizeof(orphan)), static_cast<ssize_t>(sizeof(orphan)));
  ::close(fds[0]);
  ASSERT_GT(orphan, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(helper, &status, 0), helper);
  ASSERT_EQ(::waitpid(orphan, &status, 0), orphan);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(SignalLatchTest, CountsSignalsAndRestoresTheHandlers) {
  struct sigaction before = {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &before), 0);
  {
    const SignalLatch latch({SIGHUP, SIGUSR1});
    EXPECT_EQ(latch.last(), 0);
    EXPECT_EQ(latch.count(), 0);
    ::raise(SIGUSR1);
    ::raise(SIGHUP);
    EXPECT_EQ(latch.last(), SIGHUP);
    EXPECT_EQ(latch.count(), 2);
    // A signal to the child is not the parent's: the child gets the default action (exec
    // resets caught signals), the latch stays as it was.
    std::unique_ptr<ChildProcess> child = StartOrDie(Shell("kill -HUP $$"));
    ASSERT_NE(child, nullptr);
    child->Wait();
    EXPECT_EQ(child->term_signal(), SIGHUP);
    EXPECT_EQ(latch.count(), 2);
  }
  struct sigaction after = {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace tunefleet
