// Follows the reports file of a program trial (TUNEFLEET_METRICS, launcher/agent/program_launch.h):
// the program's rank 0 appends one JSON object a line,
//
//   {"step": 100, "samples": 3200, "eval/spearman": 0.71, "train/loss": 0.4}
//
// and each complete line becomes a Report, as tunefleet's trainer sends them: `samples` (an
// integer >= 0), when present, is its place on the sweep's resource axis (Report.samples),
// else `step`; `step` (an integer >= 0) is Report.step (`samples` when only that is given);
// every other key holding a number (NaN and Infinity as Python's json writes them) is a metric.
// Keys holding anything else are ignored. A line that is not a JSON object, or has neither step
// nor samples, is skipped with one warning naming its line (the first kMaxWarnings; then one
// saying the rest go unreported); a line longer than kMaxLineBytes is skipped the same way.
// A file cut shorter (the program reopened it with "w") is read again from its start.
// Thread-safety: owned by the agent's poll loop.
#ifndef TUNEFLEET_LAUNCHER_AGENT_METRICS_FOLLOWER_H_
#define TUNEFLEET_LAUNCHER_AGENT_METRICS_FOLLOWER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "comm/proto/messages.pb.h"

namespace tunefleet {
namespace launcher {

inline constexpr size_t kMaxLineBytes = 64 * 1024;
inline constexpr size_t kMaxMetricsPerLine = 256;
inline constexpr int kMaxWarnings = 10;
// A Poll reads at most this much while the program runs (the rest at the next), so that a
// program writing fast cannot hold up the agent's loop.
inline constexpr size_t kMaxPollBytes = 4 << 20;

// One line as a Report (step, samples, metrics set; no run or trial); InvalidArgument saying
// why not, without the line's number.
absl::StatusOr<comm::Report> ParseReportLine(const std::string& line);

class MetricsFollower {
 public:
  // Opens `path` (made by the agent, empty) for reading.
  static absl::StatusOr<std::unique_ptr<MetricsFollower>> Open(const std::string& path);
  ~MetricsFollower();
  MetricsFollower(const MetricsFollower&) = delete;
  MetricsFollower& operator=(const MetricsFollower&) = delete;

  struct Lines {
    std::vector<comm::Report> reports;
    std::vector<std::string> warnings;  // "reports line 3: not JSON (...): 'epoch 1 done'; skipped"
  };
  // What was appended since the last call (up to kMaxPollBytes of it); `at_end` (the program
  // has exited): all of it, and a last line without its newline counts too.
  Lines Poll(bool at_end);

 private:
  explicit MetricsFollower(int fd) : fd_(fd) {}
  void TakeLine(const std::string& line, Lines& out);
  void Warn(const std::string& why, Lines& out);

  int fd_ = -1;
  off_t offset_ = 0;
  std::string partial_;    // the start of a line not ended yet
  bool skipping_ = false;  // in a line longer than kMaxLineBytes
  int64_t line_ = 0;       // lines taken so far
  int warnings_ = 0;
};

}  // namespace launcher
}  // namespace tunefleet

#endif  // TUNEFLEET_LAUNCHER_AGENT_METRICS_FOLLOWER_H_
