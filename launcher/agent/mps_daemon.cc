#include "launcher/agent/mps_daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/child_process.h"
#include "common/logging.h"

namespace tunefleet {
namespace launcher {
namespace {

constexpr char kControl[] = "nvidia-cuda-mps-control";

// Runs the control binary with `args` (stdin from a shell's echo when `input` is set) and
// waits; its exit code, or -1 when it could not start.
int RunControl(const std::string& control, const std::map<std::string, std::string>& env,
               const std::vector<std::string>& args, const std::string& input,
               const std::string& log) {
  ProcessSpec spec;
  spec.env = env;
  spec.log_path = log;
  spec.stderr_to_log = true;
  if (input.empty()) {
    spec.binary = control;
    spec.args = args;
  } else {
    spec.binary = "/bin/sh";
    spec.args = {"-c", absl::StrCat("echo ", input, " | \"$0\""), control};
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(spec);
  if (!child.ok()) return -1;
  (*child)->Wait();
  return (*child)->exit_code();
}

}  // namespace

std::string MpsDaemon::FindControl() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(dir, "/", kControl);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::unique_ptr<MpsDaemon> MpsDaemon::Start(const std::string& dir, const std::string& gpus,
                                            std::string* why) {
  const std::string control = FindControl();
  if (control.empty()) {
    if (why != nullptr) *why = absl::StrCat(kControl, " is not on PATH");
    return nullptr;
  }
  for (const std::string& d : {dir, dir + "/pipe", dir + "/log"}) ::mkdir(d.c_str(), 0700);
  std::unique_ptr<MpsDaemon> mps(new MpsDaemon(control, dir));
  std::map<std::string, std::string> env = mps->ClientEnv();
  env["CUDA_VISIBLE_DEVICES"] = gpus;
  const int rc = RunControl(control, env, {"-d"}, "", dir + "/control.log");
  if (rc != 0) {
    if (why != nullptr) {
      *why = absl::StrCat(control, " -d exited ", rc, " (", dir, "/control.log)");
    }
    mps->control_.clear();  // nothing to quit
    return nullptr;
  }
  return mps;
}

MpsDaemon::~MpsDaemon() {
  if (control_.empty()) return;
  const absl::Time start = absl::Now();
  const int rc = RunControl(control_, ClientEnv(), {}, "quit", dir_ + "/control.log");
  if (rc != 0) TF_LOG(WARNING) << "CUDA MPS: quit exited " << rc << " (" << dir_ << "/control.log)";
  TF_LOG(INFO) << "CUDA MPS: the control daemon quit in "
               << absl::ToInt64Milliseconds(absl::Now() - start) << " ms";
}

std::map<std::string, std::string> MpsDaemon::ClientEnv() const {
  return {{"CUDA_MPS_PIPE_DIRECTORY", dir_ + "/pipe"}, {"CUDA_MPS_LOG_DIRECTORY", dir_ + "/log"}};
}

int MpsDaemon::StartServer() const {
  return RunControl(control_, ClientEnv(), {}, absl::StrCat("start_server -uid ", ::getuid()),
                    dir_ + "/control.log");
}

void LazyMps::Prestart() {
  ClientEnv();
  if (daemon_ == nullptr) return;
  const absl::Time start = absl::Now();
  const int rc = daemon_->StartServer();
  const int64_t ms = absl::ToInt64Milliseconds(absl::Now() - start);
  if (rc == 0) {
    TF_LOG(INFO) << "CUDA MPS: started its server in " << ms << " ms";
  } else {
    TF_LOG(WARNING) << "CUDA MPS: start_server exited " << rc << " (" << daemon_->dir()
                    << "/control.log); the server starts with the first client";
  }
}

std::map<std::string, std::string> LazyMps::ClientEnv() {
  if (enabled_ && !tried_) {
    tried_ = true;
    std::string why;
    daemon_ = MpsDaemon::Start(dir_, gpus_, &why);
    TF_LOG(INFO) << "CUDA MPS: "
                 << (daemon_ != nullptr
                         ? absl::StrCat("started its control daemon (", dir_,
                                        "); trials sharing a GPU run as its clients")
                         : absl::StrCat("none (", why, "); trials sharing a GPU are time-sliced"));
  }
  return daemon_ != nullptr ? daemon_->ClientEnv() : std::map<std::string, std::string>();
}

}  // namespace launcher
}  // namespace tunefleet
