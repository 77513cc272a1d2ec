// A trainer process started by the agent: fork/exec with extra environment, in its own process
// group (so it can be signalled as a whole and a terminal's Ctrl-C reaches only the agent),
// killed by the kernel if the agent dies (PR_SET_PDEATHSIG), stdout to a log file, stderr
// through a pipe that the agent's poll loop drains into the same log and a bounded tail.
//
// An exec failure (missing binary, no permission) is reported by Start() itself, through a
// close-on-exec status pipe, not as a mysterious exit code 127.
// Thread-safety: owned by the agent's poll loop.
#ifndef TUNEFLEET_COMMON_CHILD_PROCESS_H_
#define TUNEFLEET_COMMON_CHILD_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace launcher {

struct ProcessSpec {
  std::string binary;
  std::vector<std::string> args;           // after argv[0]
  std::map<std::string, std::string> env;  // set on top of the inherited environment
  std::string log_path;                    // stdout and stderr copy; created with its folders
  bool stderr_to_log = false;              // stderr straight into the log: no pipe, no tail
};

class ChildProcess {
 public:
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const ProcessSpec& spec);
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // The read end of the stderr pipe (non-blocking), -1 once it reached end of file.
  int stderr_fd() const { return stderr_fd_; }
  // Reads what stderr has (non-blocking) into the log and the tail; closes at end of file.
  void DrainStderr();
  // The last kTailBytes of stderr, starting at a line boundary when possible.
  std::string StderrTail() const;
  // Sends `signal` to the process group.
  void Signal(int signal);

  // Exit bookkeeping, filled by the owner when waitpid reports the pid.
  bool exited() const { return exited_; }
  void SetExitStatus(int wait_status);
  int exit_code() const { return exit_code_; }      // -1 when killed by a signal
  int term_signal() const { return term_signal_; }  // 0 when it exited
  bool succeeded() const { return exited_ && exit_code_ == 0; }
  // "exit code 1", "killed by signal 9 (Killed)".
  std::string DescribeExit() const;

  static constexpr size_t kTailBytes = 4096;

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  int log_fd_ = -1;
  std::string tail_;
  bool exited_ = false;
  int exit_code_ = -1;
  int term_signal_ = 0;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CHILD_PROCESS_H_
