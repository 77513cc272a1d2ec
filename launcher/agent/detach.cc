#include "launcher/agent/detach.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/runtime_dir.h"

namespace tunefleet {
namespace launcher {
namespace {

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[512];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

absl::StatusOr<int> LockInstance(const std::string& lock_path) {
  // Never through a link: a planted agent.lock -> /etc/shadow must not be truncated.
  absl::StatusOr<int> opened = OpenPrivateFile(lock_path, O_RDWR, /*create=*/true);
  if (!opened.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open lock: ", opened.status().message()));
  }
  const int fd = *opened;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::string pid = ReadAll(fd);
    ::close(fd);
    return absl::AlreadyExistsError(absl::StrCat(
        "already running here (pid ", absl::StripAsciiWhitespace(pid), ", lock ", lock_path, ")"));
  }
  RecordLockOwner(fd);
  return fd;
}

void RecordLockOwner(int lock_fd) {
  if (::ftruncate(lock_fd, 0) != 0) return;
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::pwrite(lock_fd, pid.data(), pid.size(), 0) < 0) return;
}

absl::StatusOr<Detached> Detach(const std::string& log_path, const std::string& what) {
  absl::StatusOr<int> opened = OpenPrivateFile(log_path, O_WRONLY | O_APPEND, /*create=*/true);
  if (!opened.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open log: ", opened.status().message()));
  }
  const int log = *opened;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(log);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  Detached out;
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::setsid();
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::close(null);
    }
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
    out.ready_fd = pipe_fds[1];
    return out;
  }
  ::close(log);
  ::close(pipe_fds[1]);
  const std::string said = ReadAll(pipe_fds[0]);
  ::close(pipe_fds[0]);
  out.parent = true;
  if (absl::StartsWith(said, "ok")) {
    std::cout << what << ": running in the background as pid " << pid << " (log " << log_path << ")"
              << std::endl;
    out.exit_code = 0;
    return out;
  }
  int status = 0;
  std::string how;
  if (::waitpid(pid, &status, WNOHANG) == pid) {
    how = WIFEXITED(status) ? absl::StrCat(" (exit code ", WEXITSTATUS(status), ")")
                            : absl::StrCat(" (killed by signal ", WTERMSIG(status), ")");
  }
  std::string message(absl::StripAsciiWhitespace(said));
  if (message.empty())
    message = absl::StrCat("exited before it was ready", how, "; see ", log_path);
  std::cerr << what << ": " << message << std::endl;
  out.exit_code = 1;
  return out;
}

void ReportReady(int* ready_fd) {
  if (*ready_fd < 0) return;
  WriteAll(*ready_fd, "ok\n");
  ::close(*ready_fd);
  *ready_fd = -1;
}

void ReportFailure(int* ready_fd, const std::string& message) {
  if (*ready_fd < 0) return;
  WriteAll(*ready_fd, message + "\n");
  ::close(*ready_fd);
  *ready_fd = -1;
}

}  // namespace launcher
}  // namespace tunefleet
