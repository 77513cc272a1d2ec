// Process supervision, the one place for it: a child started by fork/exec (clone with
// CLONE_VM | CLONE_VFORK, as glibc's posix_spawn) with extra environment, in its own process
// group (so it can be signalled as a whole and a terminal's Ctrl-C reaches only the parent),
// killed by the kernel if the parent dies (PR_SET_PDEATHSIG); reaped with waitpid, by the owner
// (Reap, Wait) or by a loop that reaps every child (SetExitStatus); stopped gracefully, then
// hard (Stop, StopAll: SIGTERM to the group, SIGKILL after a grace).
//
// Its output: stdout to a log file (or the parent's), or through a pipe into memory
// (capture_stdout: a command whose answer is its output); stderr through a pipe that the
// owner's poll loop drains into the same log and a bounded tail (or straight into the log);
// or all three streams the parent's (inherit_stdio).
//
// Users: the agent's trainers and remote shells (launcher/), hpo's dev-mode head and agent
// (hpo/dev_cluster.h), the trainer's own local ranks (trainer/distributed/local_ranks.h),
// hpo's pre-sweep question to the trainer (hpo/config/trainer_query.h).
//
// An exec failure (missing binary, no permission) is reported by Start() itself, through a
// close-on-exec status pipe, not as a mysterious exit code 127.
// Thread-safety: a ChildProcess is owned by one thread (the one that started it: the
// parent-death signal follows that thread); Start blocks every signal in the calling thread
// while the child shares its memory, so no handler of the parent's runs on the child's side.
#ifndef TUNEFLEET_COMMON_CHILD_PROCESS_H_
#define TUNEFLEET_COMMON_CHILD_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tunefleet {

struct ProcessSpec {
  std::string binary;
  std::vector<std::string> args;           // after argv[0]
  std::map<std::string, std::string> env;  // set on top of the inherited environment
  std::string log_path;                    // stdout and stderr copy; created with its folders
  bool stderr_to_log = false;              // stderr straight into the log: no pipe, no tail
  // stdin, stdout and stderr stay the parent's (log_path must be empty): no pipe, no tail.
  // Otherwise stdin is /dev/null.
  bool inherit_stdio = false;
  // stdout through a pipe, kept whole in memory (captured_stdout()); log_path must be empty.
  bool capture_stdout = false;
  // The folder it starts in ("" = the parent's). A relative `binary` is taken from there.
  std::string working_dir;
};

// The program a command names, as execvp finds it: `name` itself when it holds a '/' (taken
// from `working_dir` when relative), else the first executable file of that name in the
// folders of `path` (a PATH value; empty: the default "/usr/local/bin:/usr/bin:/bin").
// Errors: "python4: not found on PATH (/usr/bin:/bin)", "./train.sh: not executable".
absl::StatusOr<std::string> FindProgram(const std::string& name, const std::string& path,
                                        const std::string& working_dir = "");

class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const ProcessSpec& spec);
  // A child still running is killed (SIGKILL to its group) and reaped.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // The read end of the stderr pipe (non-blocking), -1 once it reached end of file.
  int stderr_fd() const { return stderr_fd_; }
  // Reads what stderr has (non-blocking) into the log and the tail; closes at end of file.
  void DrainStderr();
  // The last kTailBytes of stderr, starting at a line boundary when possible.
  std::string StderrTail() const;
  // With capture_stdout: what stdout has written so far.
  const std::string& captured_stdout() const { return stdout_; }
  // Drains stdout (with capture_stdout) and stderr, blocking, until both reach end of file.
  void DrainUntilClosed();
  // Sends `signal` to the process group (nothing once it exited).
  void Signal(int signal);

  // Reaping. Reap: waitpid without blocking; true once it exited. Wait: blocks until it exits.
  // Both record the exit status. An owner whose loop reaps every child (waitpid(-1)) calls
  // SetExitStatus with what waitpid reported for pid() instead.
  bool Reap();
  void Wait();
  void SetExitStatus(int wait_status);

  // Graceful, then hard: SIGTERM to the group, reaping until it exits or `grace` passes (or
  // `cut_short` says so: a second Ctrl-C), then SIGKILL to the group and Wait. Returns once
  // it is reaped; nothing when it exited already.
  void Stop(absl::Duration grace, const std::function<bool()>& cut_short = nullptr);

  bool exited() const { return exited_; }
  int exit_code() const { return exit_code_; }      // -1 when killed by a signal
  int term_signal() const { return term_signal_; }  // 0 when it exited
  bool succeeded() const { return exited_ && exit_code_ == 0; }
  // As a shell reports it: the exit code, or 128 + the signal.
  int ShellExitCode() const { return term_signal_ != 0 ? 128 + term_signal_ : exit_code_; }
  // "exit code 1", "killed by signal 9 (Killed)".
  std::string DescribeExit() const;
  // The same as a phrase after its name: "exited with exit code 1", "was killed by signal 9
  // (Killed)".
  std::string HowItEnded() const;

  static constexpr size_t kTailBytes = 4096;

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  int stdout_fd_ = -1;
  int log_fd_ = -1;
  std::string tail_;
  std::string stdout_;
  bool exited_ = false;
  int exit_code_ = -1;
  int term_signal_ = 0;
};

// ChildProcess::Stop for several children at once, under one grace: SIGTERM to every running
// one's group, then SIGKILL to those still running after `grace` (or once `cut_short` says so).
// Returns once all are reaped. Null entries are skipped.
void StopAll(const std::vector<ChildProcess*>& children, absl::Duration grace,
             const std::function<bool()>& cut_short = nullptr);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CHILD_PROCESS_H_
