// Signals as poll-able file descriptor events, so each process's single poll loop owns its
// signal handling (no async handlers); SignalLatch below for the one loop that cannot.
//
//   SignalFd signals({SIGINT, SIGTERM, SIGCHLD});  // before creating threads (ZeroMQ contexts)
//   ... poll signals.fd() with the sockets ...
//   for (int sig : signals.Read()) ...
//
// The signals are blocked in the calling thread, and so in every thread it creates afterwards;
// create the SignalFd in main() before any thread. Children started with fork/exec must call
// RestoreChildSignalMask() before exec (the mask is inherited across exec).
// Thread-safety: one owner thread (SignalLatch: its handlers run on any thread).
#ifndef TUNEFLEET_COMMON_SIGNALS_H_
#define TUNEFLEET_COMMON_SIGNALS_H_

#include <csignal>
#include <initializer_list>
#include <utility>
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

// For a child between fork (or clone) and exec: resets every caught signal, and SIGINT,
// SIGTERM, SIGCHLD, SIGHUP, SIGPIPE and SIGQUIT, to its default, then unblocks every signal.
void RestoreChildSignalMask();

// For a loop that supervises children without a SignalFd (one that must not block signals in
// a process whose threads already run, e.g. the trainer's local ranks): process-wide handlers
// for `signals` that only record the last one caught and how many; the previous handlers come
// back at destruction. One latch at a time per process.
class SignalLatch {
 public:
  explicit SignalLatch(std::initializer_list<int> signals);
  ~SignalLatch();
  SignalLatch(const SignalLatch&) = delete;
  SignalLatch& operator=(const SignalLatch&) = delete;

  int last() const;   // the last signal caught; 0 when none
  int count() const;  // how many were caught

 private:
  std::vector<std::pair<int, struct sigaction>> saved_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SIGNALS_H_
