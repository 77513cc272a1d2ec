#include "common/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {
namespace {

ABSL_CONST_INIT absl::Mutex g_context_mu(absl::kConstInit);
// Never destroyed: a log line written while the process exits still finds it.
std::string& Role() ABSL_EXCLUSIVE_LOCKS_REQUIRED(g_context_mu) {
  static std::string* role = new std::string;
  return *role;
}
std::atomic<int64_t> g_trial{-1};
std::atomic<int> g_rank{-1};

LogLevel LevelFromEnv() {
  const char* env = std::getenv("TUNEFLEET_LOG_LEVEL");
  LogLevel level = LogLevel::kINFO;
  if (env != nullptr) ParseLogLevel(env, &level);
  return level;
}
std::atomic<int> g_min_level{static_cast<int>(LevelFromEnv())};

const char kLevelChar[] = {'D', 'I', 'W', 'E', 'F'};

}  // namespace

void SetLogRole(const std::string& role) {
  absl::MutexLock lock(&g_context_mu);
  Role() = role;
}
void SetLogTrial(int64_t trial) { g_trial = trial; }
void SetLogRank(int rank) { g_rank = rank; }
void SetMinLogLevel(LogLevel level) { g_min_level = static_cast<int>(level); }
LogLevel MinLogLevel() { return static_cast<LogLevel>(g_min_level.load()); }

bool ParseLogLevel(const std::string& text, LogLevel* level) {
  if (text == "debug")
    *level = LogLevel::kDEBUG;
  else if (text == "info")
    *level = LogLevel::kINFO;
  else if (text == "warning")
    *level = LogLevel::kWARNING;
  else if (text == "error")
    *level = LogLevel::kERROR;
  else
    return false;
  return true;
}

std::string LogContextPrefix() {
  std::string out;
  {
    absl::MutexLock lock(&g_context_mu);
    out = Role();
  }
  const int64_t trial = g_trial;
  const int rank = g_rank;
  if (trial >= 0) out += (out.empty() ? "" : " ") + std::string("trial=") + std::to_string(trial);
  if (rank >= 0) out += (out.empty() ? "" : " ") + std::string("rank=") + std::to_string(rank);
  return out;
}

LogMessage::LogMessage(const char* file, int line, LogLevel level)
    : file_(file), line_(line), level_(level) {}

LogMessage::~LogMessage() {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "%c%02d%02d %02d:%02d:%02d.%03d",
                kLevelChar[static_cast<int>(level_)], local.tm_mon + 1, local.tm_mday,
                local.tm_hour, local.tm_min, local.tm_sec, static_cast<int>(tv.tv_usec / 1000));
  const char* base = std::strrchr(file_, '/');
  base = base ? base + 1 : file_;
  std::string context = LogContextPrefix();
  std::string text = std::string(stamp) + " " + (context.empty() ? "" : context + " ") + base +
                     ":" + std::to_string(line_) + "] " + stream_.str() + "\n";
  // One write so that concurrent lines never interleave.
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (level_ == LogLevel::kFATAL) std::abort();
}

}  // namespace tunefleet
