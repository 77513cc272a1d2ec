#include "common/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/exec_args.h"
#include "common/safe_path.h"
#include "common/signals.h"

namespace tunefleet {
namespace {

// What the child needs between clone and execve; it calls only async-signal-safe functions
// and allocates nothing.
struct ChildSetup {
  const ExecArgs* exec = nullptr;
  pid_t parent = 0;
  int log_fd = -1;
  bool stderr_to_log = false;
  bool inherit_stdio = false;
  int err_w = -1;     // the stderr pipe's write end
  int out_w = -1;     // the stdout pipe's write end (capture_stdout)
  int status_w = -1;  // gets execve's errno if it fails (close-on-exec: EOF when it succeeds)
  const char* working_dir = nullptr;  // chdir there first; its failure's errno is sent negated
};

constexpr size_t kChildStackBytes = 64 * 1024;
constexpr absl::Duration kReapPoll = absl::Milliseconds(20);

int RunChild(void* arg) {
  const ChildSetup& s = *static_cast<const ChildSetup*>(arg);
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != s.parent) _exit(127);  // the parent died between clone and prctl
  RestoreChildSignalMask();  // handlers to default first, then the (all-blocked) mask cleared
  if (!s.inherit_stdio) {
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    if (s.out_w >= 0) {
      ::dup2(s.out_w, STDOUT_FILENO);
    } else if (s.log_fd >= 0) {
      ::dup2(s.log_fd, STDOUT_FILENO);
    }
    ::dup2(s.stderr_to_log ? s.log_fd : s.err_w, STDERR_FILENO);
  }
  if (s.working_dir != nullptr && ::chdir(s.working_dir) != 0) {
    const int e = -errno;
    ssize_t ignored = ::write(s.status_w, &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  ::execve(s.exec->argv()[0], s.exec->argv(), s.exec->envp());
  const int e = errno;
  ssize_t ignored = ::write(s.status_w, &e, sizeof(e));
  (void)ignored;
  _exit(127);
}

// Reaps what has ended among `children`; true while any runs.
bool ReapAll(const std::vector<ChildProcess*>& children) {
  bool running = false;
  for (ChildProcess* c : children) {
    if (c != nullptr && !c->Reap()) running = true;
  }
  return running;
}

// The pipes between the parent and the child; -1 where one is not opened.
struct ChildPipes {
  int err[2] = {-1, -1};     // stderr, unless the child inherits the parent's stdio
  int out[2] = {-1, -1};     // stdout (capture_stdout)
  int status[2] = {-1, -1};  // execve's (or chdir's) errno, close-on-exec

  void CloseAll() {
    for (int fd : {err[0], err[1], out[0], out[1], status[0], status[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

// Opens the pipes `spec` needs, all close-on-exec; on failure none stays open.
absl::Status OpenPipes(const ProcessSpec& spec, bool capture, ChildPipes& pipes) {
  if ((!spec.inherit_stdio && ::pipe2(pipes.err, O_CLOEXEC) != 0) ||
      (capture && ::pipe2(pipes.out, O_CLOEXEC) != 0) || ::pipe2(pipes.status, O_CLOEXEC) != 0) {
    const int e = errno;
    pipes.CloseAll();
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(e)));
  }
  return absl::OkStatus();
}

// Starts RunChild(setup) and returns once it has exec'd or failed to.
//
// The child runs on its own stack in the parent's memory until it execs (CLONE_VM |
// CLONE_VFORK, as glibc's posix_spawn), so starting a trainer copies none of the agent's
// page tables: fork did, for 18% of the CPU of a 10,000-trial sweep. This thread waits
// meanwhile; the others do not touch the child's stack. Every signal stays blocked until the
// child has reset its handlers, so none of the parent's handlers runs in the shared memory.
absl::StatusOr<pid_t> CloneChild(ChildSetup& setup) {
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  std::unique_ptr<char[]> stack(new char[kChildStackBytes]);
  const pid_t pid =
      ::clone(RunChild, stack.get() + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) return absl::InternalError(absl::StrCat("clone: ", std::strerror(clone_errno)));
  return pid;
}

// Reads the status pipe to its end and closes it: true with the child's errno when execve (or
// chdir, negated) failed; false when the pipe closed empty (it exec'd).
bool ReadExecFailure(int status_r, int& exec_errno) {
  exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_r, &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(status_r);
  return n == static_cast<ssize_t>(sizeof(exec_errno));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(const ProcessSpec& spec) {
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  if (!spec.log_path.empty() && !spec.inherit_stdio) {
    // Its folders made, and the log opened, never through a link planted on the way
    // (common/safe_path.h).
    absl::StatusOr<int> log = OpenSafeFile(spec.log_path, O_WRONLY | O_CREAT | O_APPEND, 0666,
                                           /*make_folders=*/true);
    if (!log.ok()) return log.status();
    child->log_fd_ = *log;
  }
  const bool capture = spec.capture_stdout && !spec.inherit_stdio;
  ChildPipes pipes;
  if (absl::Status opened = OpenPipes(spec, capture, pipes); !opened.ok()) return opened;
  const ExecArgs exec(spec.binary, spec.args, spec.env);  // nothing is allocated in the child
  ChildSetup setup;
  setup.exec = &exec;
  setup.parent = ::getpid();
  setup.log_fd = child->log_fd_;
  setup.stderr_to_log = spec.stderr_to_log && setup.log_fd >= 0;
  setup.inherit_stdio = spec.inherit_stdio;
  setup.err_w = pipes.err[1];
  setup.out_w = pipes.out[1];
  setup.status_w = pipes.status[1];
  if (!spec.working_dir.empty()) setup.working_dir = spec.working_dir.c_str();
  const bool keep_stderr_pipe = !spec.inherit_stdio && !setup.stderr_to_log;
  const absl::StatusOr<pid_t> pid = CloneChild(setup);
  if (!pid.ok()) {
    pipes.CloseAll();
    return pid.status();
  }
  if (pipes.err[1] >= 0) ::close(pipes.err[1]);
  if (pipes.out[1] >= 0) ::close(pipes.out[1]);
  ::close(pipes.status[1]);
  child->pid_ = *pid;
  int exec_errno = 0;
  if (ReadExecFailure(pipes.status[0], exec_errno)) {
    if (pipes.err[0] >= 0) ::close(pipes.err[0]);
    if (pipes.out[0] >= 0) ::close(pipes.out[0]);
    child->Wait();
    child->pid_ = -1;
    if (exec_errno < 0) {
      return absl::FailedPreconditionError(absl::StrCat("cannot start ", spec.binary, " in ",
                                                        spec.working_dir, ": ",
                                                        std::strerror(-exec_errno)));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run ", spec.binary, ": ", std::strerror(exec_errno)));
  }
  child->stdout_fd_ = pipes.out[0];
  if (!keep_stderr_pipe) {
    if (pipes.err[0] >= 0) ::close(pipes.err[0]);
    return child;
  }
  child->stderr_fd_ = pipes.err[0];
  ::fcntl(child->stderr_fd_, F_SETFL, ::fcntl(child->stderr_fd_, F_GETFL) | O_NONBLOCK);
  return child;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exited_) {
    ::kill(-pid_, SIGKILL);
    Wait();
  }
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
}

void ChildProcess::DrainUntilClosed() {
  while (stdout_fd_ >= 0 || stderr_fd_ >= 0) {
    pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) {
      char buf[65536];
      const ssize_t n = ::read(stdout_fd_, buf, sizeof(buf));
      if (n > 0) {
        stdout_.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(stdout_fd_);
        stdout_fd_ = -1;
      }
    }
    if (fds[1].revents != 0) DrainStderr();
  }
}

void ChildProcess::DrainStderr() {
  if (stderr_fd_ < 0) return;
  char buf[16384];
  while (true) {
    const ssize_t n = ::read(stderr_fd_, buf, sizeof(buf));
    if (n > 0) {
      if (log_fd_ >= 0) {
        ssize_t ignored = ::write(log_fd_, buf, static_cast<size_t>(n));
        (void)ignored;
      }
      tail_.append(buf, static_cast<size_t>(n));
      if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
      continue;
    }
    if (n == 0) {  // end of file: the child (and anything it forked) closed stderr
      ::close(stderr_fd_);
      stderr_fd_ = -1;
    }
    return;  // EAGAIN or error
  }
}

std::string ChildProcess::StderrTail() const {
  if (tail_.size() <= kTailBytes) return tail_;
  std::string t = tail_.substr(tail_.size() - kTailBytes);
  const size_t nl = t.find('\n');
  if (nl != std::string::npos && nl + 1 < t.size()) t.erase(0, nl + 1);
  return t;
}

void ChildProcess::Signal(int signal) {
  if (pid_ > 0 && !exited_) ::kill(-pid_, signal);
}

bool ChildProcess::Reap() {
  if (exited_ || pid_ <= 0) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  SetExitStatus(status);
  return true;
}

void ChildProcess::Wait() {
  if (exited_ || pid_ <= 0) return;
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  if (got == pid_) {
    SetExitStatus(status);
  } else {
    exited_ = true;  // not our child any more (reaped elsewhere): nothing left to wait for
  }
}

void ChildProcess::Stop(absl::Duration grace, const std::function<bool()>& cut_short) {
  StopAll({this}, grace, cut_short);
}

void StopAll(const std::vector<ChildProcess*>& children, absl::Duration grace,
             const std::function<bool()>& cut_short) {
  if (!ReapAll(children)) return;
  for (ChildProcess* c : children) {
    if (c != nullptr) c->Signal(SIGTERM);
  }
  const absl::Time deadline = absl::Now() + grace;
  while (absl::Now() < deadline && !(cut_short && cut_short())) {
    absl::SleepFor(kReapPoll);
    if (!ReapAll(children)) return;
  }
  for (ChildProcess* c : children) {
    if (c == nullptr || c->exited()) continue;
    c->Signal(SIGKILL);
    c->Wait();
  }
}

void ChildProcess::SetExitStatus(int wait_status) {
  exited_ = true;
  if (WIFEXITED(wait_status)) {
    exit_code_ = WEXITSTATUS(wait_status);
    term_signal_ = 0;
  } else if (WIFSIGNALED(wait_status)) {
    exit_code_ = -1;
    term_signal_ = WTERMSIG(wait_status);
  }
}

std::string ChildProcess::DescribeExit() const {
  if (!exited_) return "running";
  if (term_signal_ != 0) {
    return absl::StrCat("killed by signal ", term_signal_, " (", strsignal(term_signal_), ")");
  }
  return absl::StrCat("exit code ", exit_code_);
}

std::string ChildProcess::HowItEnded() const {
  return absl::StrCat(term_signal_ != 0 ? "was " : "exited with ", DescribeExit());
}

absl::StatusOr<std::string> FindProgram(const std::string& name, const std::string& path,
                                        const std::string& working_dir) {
  if (name.empty()) return absl::InvalidArgumentError("the program's name is empty");
  auto executable = [](const std::string& file) {
    struct stat st;
    return ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(file.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    const std::string file =
        name[0] == '/' || working_dir.empty() ? name : absl::StrCat(working_dir, "/", name);
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(name, ": ", std::strerror(errno)));
    }
    if (!executable(file)) {
      return absl::FailedPreconditionError(absl::StrCat(name, ": not executable"));
    }
    return file;
  }
  const std::string dirs = path.empty() ? "/usr/local/bin:/usr/bin:/bin" : path;
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end == start ? "." : dirs.substr(start, end - start);
    const std::string file = absl::StrCat(dir, "/", name);
    if (executable(file)) return file;
    start = end + 1;
  }
  return absl::NotFoundError(absl::StrCat(name, ": not found on PATH (", dirs, ")"));
}

}  // namespace tunefleet
