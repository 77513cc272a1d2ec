// Process-wide logging with role, trial and rank context.
//
//   SetLogRole("agent"); SetLogTrial(7); SetLogRank(1);
//   TF_LOG(INFO) << "started " << n << " ranks";
// prints one line to stderr, written with a single write(2) so lines of concurrent threads and
// processes sharing a terminal never interleave:
//   I1122 14:03:07.123 agent trial=7 rank=1 agent.cc:88] started 2 ranks
// The minimum level comes from TUNEFLEET_LOG_LEVEL (debug|info|warning|error; default info) or
// SetMinLogLevel(). TF_LOG(FATAL) logs and aborts; TF_CHECK(cond) is for true invariants only.
// Thread-safety: all functions are safe to call from any thread.
#ifndef TUNEFLEET_COMMON_LOGGING_H_
#define TUNEFLEET_COMMON_LOGGING_H_

#include <cstdint>
#include <sstream>
#include <string>

namespace tunefleet {

enum class LogLevel { kDEBUG = 0, kINFO = 1, kWARNING = 2, kERROR = 3, kFATAL = 4 };

void SetLogRole(const std::string& role);
void SetLogTrial(int64_t trial);  // negative clears
void SetLogRank(int rank);        // negative clears
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();
// Parses "debug", "info", "warning", "error"; returns false on anything else.
bool ParseLogLevel(const std::string& text, LogLevel* level);

// Formats the context prefix ("agent trial=7 rank=1"); exposed for tests.
std::string LogContextPrefix();

class LogMessage {
 public:
  LogMessage(const char* file, int line, LogLevel level);
  ~LogMessage();
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  const char* file_;
  int line_;
  LogLevel level_;
  std::ostringstream stream_;
};

// Swallows the stream when a level is disabled.
struct LogVoidify {
  void operator&(std::ostream&) {}
};

}  // namespace tunefleet

#define TF_LOG(level)                                            \
  (::tunefleet::LogLevel::k##level < ::tunefleet::MinLogLevel()) \
      ? (void)0                                                  \
      : ::tunefleet::LogVoidify() &                              \
            ::tunefleet::LogMessage(__FILE__, __LINE__, ::tunefleet::LogLevel::k##level).stream()

#define TF_CHECK(cond)                                                                             \
  (cond) ? (void)0                                                                                 \
         : ::tunefleet::LogVoidify() &                                                             \
               ::tunefleet::LogMessage(__FILE__, __LINE__, ::tunefleet::LogLevel::kFATAL).stream() \
                   << "Check failed: " #cond " "

#endif  // TUNEFLEET_COMMON_LOGGING_H_
