#include "testing/head_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/logging.h"

namespace tunefleet {
namespace bench {
namespace {

// The child: never returns.
[[noreturn]] void RunChild(launcher::Head::Options options, const std::string& log_path,
                           int pipe_fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl
  LogLevel level = log_path.empty() ? LogLevel::kWARNING : LogLevel::kINFO;
  if (const char* env = std::getenv("TUNEFLEET_LOG_LEVEL"); env != nullptr) {
    ParseLogLevel(env, &level);
  }
  SetMinLogLevel(level);
  SetLogRole("head");
  if (!log_path.empty()) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(1);
    close(fd);
  }
  absl::Status result;
  {
    launcher::Head head(std::move(options), /*signals=*/nullptr);
    absl::Status bound = head.Bind();
    const std::string line =
        bound.ok() ? absl::StrCat(head.endpoint(), "\n") : absl::StrCat("!", bound.message(), "\n");
    if (write(pipe_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(1);
    close(pipe_fd);
    if (!bound.ok()) _exit(1);
    result = head.Run();
  }
  if (!result.ok()) TF_LOG(ERROR) << "head: " << result.message();
  _exit(result.ok() ? 0 : 1);
}

double TicksToSeconds(int64_t ticks) {
  static const long hz = sysconf(_SC_CLK_TCK);
  return static_cast<double>(ticks) / static_cast<double>(hz);
}

// utime + stime of a /proc/.../stat file, in seconds.
absl::StatusOr<double> StatCpuSeconds(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (text.empty() || paren == std::string::npos) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  // After "pid (comm)": state is field 3, utime 14, stime 15.
  std::vector<std::string> fields = absl::StrSplit(text.substr(paren + 1), ' ', absl::SkipEmpty());
  int64_t utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::DataLossError(absl::StrCat("unexpected format of ", path));
  }
  return TicksToSeconds(utime + stime);
}

// A "Name:   123 kB" line of /proc/.../status.
absl::StatusOr<int64_t> StatusKib(const std::string& path, absl::string_view name) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, name) || !absl::ConsumePrefix(&rest, ":")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    int64_t kib = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) return kib;
  }
  return absl::NotFoundError(absl::StrCat("no ", name, " in ", path));
}

}  // namespace

absl::StatusOr<std::unique_ptr<HeadProcess>> HeadProcess::Start(launcher::Head::Options options,
                                                                const std::string& log_path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    close(fds[0]);
    RunChild(std::move(options), log_path, fds[1], parent);
  }
  close(fds[1]);
  std::unique_ptr<HeadProcess> head(new HeadProcess(pid, ""));
  std::string line;
  char c;
  while (read(fds[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(fds[0]);
  if (line.empty() || line[0] == '!') {
    return absl::UnavailableError(absl::StrCat("the head process did not start",
                                               line.empty() ? "" : ": ",
                                               line.empty() ? "" : line.substr(1)));
  }
  head->endpoint_ = std::move(line);
  return head;
}

HeadProcess::~HeadProcess() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

absl::StatusOr<HeadProcess::Usage> HeadProcess::Sample() const {
  const std::string proc = absl::StrCat("/proc/", pid_);
  Usage usage;
  absl::StatusOr<int64_t> rss = StatusKib(proc + "/status", "VmRSS");
  absl::StatusOr<int64_t> hwm = StatusKib(proc + "/status", "VmHWM");
  absl::StatusOr<double> cpu = StatCpuSeconds(proc + "/stat");
  absl::StatusOr<double> loop = StatCpuSeconds(absl::StrCat(proc, "/task/", pid_, "/stat"));
  if (!rss.ok()) return rss.status();
  if (!hwm.ok()) return hwm.status();
  if (!cpu.ok()) return cpu.status();
  if (!loop.ok()) return loop.status();
  usage.rss_kib = *rss;
  usage.hwm_kib = *hwm;
  usage.cpu_s = *cpu;
  usage.loop_cpu_s = *loop;
  return usage;
}

absl::StatusOr<HeadProcess::Final> HeadProcess::Wait(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    struct rusage usage {};
    const pid_t got = wait4(pid_, &status, WNOHANG, &usage);
    if (got == pid_) {
      reaped_ = true;
      Final final;
      final.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      final.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
      final.max_rss_kib = usage.ru_maxrss;
      return final;
    }
    if (got < 0) return absl::InternalError(absl::StrCat("wait4: ", strerror(errno)));
    if (absl::Now() >= deadline) {
      return absl::DeadlineExceededError("the head process did not exit");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace bench
}  // namespace tunefleet
