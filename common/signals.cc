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
  // Handlers first, then the mask: a child that shares its parent's memory until exec
  // (common/child_process.h) must never run one of the parent's handlers. So every caught
  // signal goes back to its default, as posix_spawn does, and so do these, even when ignored.
  for (int s = 1; s < NSIG; ++s) {
    struct sigaction old = {};
    if (::sigaction(s, nullptr, &old) != 0) continue;
    const bool caught = (old.sa_flags & SA_SIGINFO) != 0 ||
                        (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    const bool listed =
        s == SIGINT || s == SIGTERM || s == SIGCHLD || s == SIGHUP || s == SIGPIPE || s == SIGQUIT;
    if (caught || listed) ::signal(s, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

namespace {

// SignalLatch's record: written by the handler, read by its owner.
volatile sig_atomic_t g_latched_last = 0;
volatile sig_atomic_t g_latched_count = 0;

void Latch(int sig) {
  g_latched_last = sig;
  g_latched_count = g_latched_count + 1;
}

}  // namespace

SignalLatch::SignalLatch(std::initializer_list<int> signals) {
  g_latched_last = 0;
  g_latched_count = 0;
  struct sigaction action = {};
  action.sa_handler = Latch;
  sigemptyset(&action.sa_mask);
  for (int s : signals) {
    struct sigaction old = {};
    if (::sigaction(s, &action, &old) == 0) saved_.push_back({s, old});
  }
}

SignalLatch::~SignalLatch() {
  for (const auto& [s, old] : saved_) ::sigaction(s, &old, nullptr);
}

int SignalLatch::last() const { return g_latched_last; }

int SignalLatch::count() const { return g_latched_count; }

}  // namespace tunefleet
