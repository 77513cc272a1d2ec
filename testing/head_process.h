// A real launcher::Head in a forked child process, for benchmarks that want the head's own CPU
// time and memory apart from the simulated peers that drive it.
//
//   absl::StatusOr<std::unique_ptr<HeadProcess>> head = HeadProcess::Start(options, "");
//   ... connect DEALERs to (*head)->endpoint(), Sample() whenever ...
//   ... a client sends Shutdown ...
//   absl::StatusOr<HeadProcess::Final> final = (*head)->Wait(absl::Seconds(10));
//
// Start() forks before it creates anything else, so it must be called while the calling
// process has a single thread (before any ZeroMQ context exists). The child runs the same
// Head as `//launcher:head` (without signals or the agent launcher) on Options::bind, writes
// its resolved endpoint back through a pipe, serves until a client's Shutdown, and exits 0
// (1 when Run() fails). It dies with its parent (PR_SET_PDEATHSIG).
//
// Sample() reads /proc/PID: VmRSS and VmHWM, and the CPU time (user + system, clock ticks) of the
// whole process (the poll loop plus ZeroMQ's I/O thread) and of its main thread (the poll loop).
// Thread-safety: not thread-safe; use from one thread.
#ifndef TUNEFLEET_TESTING_HEAD_PROCESS_H_
#define TUNEFLEET_TESTING_HEAD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "launcher/head/head.h"

namespace tunefleet {
namespace bench {

class HeadProcess {
 public:
  struct Usage {
    int64_t rss_kib = 0;
    int64_t hwm_kib = 0;    // peak RSS so far (VmHWM)
    double cpu_s = 0;       // the head process, every thread
    double loop_cpu_s = 0;  // its main thread: Head::Run's poll loop
  };
  struct Final {
    int exit_code = -1;  // -1: killed by a signal
    double cpu_s = 0;    // wait4's user + system time, every thread
    int64_t max_rss_kib = 0;
  };

  // `log_path` empty: the child logs WARNING and above to stderr; else INFO and above (the
  // real head's default) to that file. TUNEFLEET_LOG_LEVEL overrides either level.
  static absl::StatusOr<std::unique_ptr<HeadProcess>> Start(launcher::Head::Options options,
                                                            const std::string& log_path);
  // Kills (SIGKILL) and reaps the child if it is still running.
  ~HeadProcess();
  HeadProcess(const HeadProcess&) = delete;
  HeadProcess& operator=(const HeadProcess&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  pid_t pid() const { return pid_; }

  absl::StatusOr<Usage> Sample() const;
  // Waits up to `timeout` for the child to exit; DeadlineExceeded if it has not.
  absl::StatusOr<Final> Wait(absl::Duration timeout);

 private:
  HeadProcess(pid_t pid, std::string endpoint) : pid_(pid), endpoint_(std::move(endpoint)) {}

  pid_t pid_;
  std::string endpoint_;
  bool reaped_ = false;
};

}  // namespace bench
}  // namespace tunefleet

#endif  // TUNEFLEET_TESTING_HEAD_PROCESS_H_
