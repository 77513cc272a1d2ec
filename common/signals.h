// Signals as poll-able file descriptor events, so each process's single poll loop owns its
// signal handling (no async handlers).
//
//   SignalFd signals({SIGINT, SIGTERM, SIGCHLD});  // before creating threads (ZeroMQ contexts)
//   ... poll signals.fd() with the sockets ...
//   for (int sig : signals.Read()) ...
//
// The signals are blocked in the calling thread, and so in every thread it creates afterwards;
// create the SignalFd in main() before any thread. Children started with fork/exec must call
// RestoreChildSignalMask() before exec (the mask is inherited across exec).
// Thread-safety: one owner thread.
#ifndef TUNEFLEET_COMMON_SIGNALS_H_
#define TUNEFLEET_COMMON_SIGNALS_H_

#include <csignal>
#include <initializer_list>
#include <vector>

namespace tunefleet {

class SignalFd {
 public:
  explicit SignalFd(std::initializer_list<int> signals);
  ~SignalFd();
  SignalFd(const SignalFd&) = delete;
  SignalFd& operator=(const SignalFd&) = delete;

  int fd() const { return fd_; }
  // The signals that arrived since the last call (non-blocking; empty when none).
  std::vector<int> Read();

 private:
  int fd_ = -1;
  sigset_t mask_;
};

// Unblocks every signal and resets handlers to default; for a forked child before exec.
void RestoreChildSignalMask();

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SIGNALS_H_
