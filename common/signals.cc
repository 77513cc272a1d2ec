#include "common/signals.h"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/logging.h"

namespace tunefleet {

SignalFd::SignalFd(std::initializer_list<int> signals) {
  sigemptyset(&mask_);
  for (int s : signals) sigaddset(&mask_, s);
  TF_CHECK(pthread_sigmask(SIG_BLOCK, &mask_, nullptr) == 0);
  fd_ = signalfd(-1, &mask_, SFD_NONBLOCK | SFD_CLOEXEC);
  TF_CHECK(fd_ >= 0) << "signalfd: " << std::strerror(errno);
}

SignalFd::~SignalFd() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<int> SignalFd::Read() {
  std::vector<int> out;
  signalfd_siginfo info;
  while (true) {
    ssize_t n = ::read(fd_, &info, sizeof(info));
    if (n != static_cast<ssize_t>(sizeof(info))) break;
    out.push_back(static_cast<int>(info.ssi_signo));
  }
  return out;
}

void RestoreChildSignalMask() {
  sigset_t all;
  sigemptyset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  for (int s : {SIGINT, SIGTERM, SIGCHLD, SIGHUP, SIGPIPE, SIGQUIT}) signal(s, SIG_DFL);
}

}  // namespace tunefleet
