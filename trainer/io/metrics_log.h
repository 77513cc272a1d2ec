// OUTPUT_DIR/metrics.jsonl: one JSON object a line, {"step": N, "samples": M, "key": value, ...}
// ("samples", an integer, only when given), appended
// and flushed line by line so that a crash loses at most the line being written. Opening it to
// resume from step S drops the lines of steps after S (written after the checkpoint being
// resumed), rewriting the file atomically. Non-finite values are written as null.
// Thread-safety: not thread-safe.
#ifndef TUNEFLEET_TRAINER_IO_METRICS_LOG_H_
#define TUNEFLEET_TRAINER_IO_METRICS_LOG_H_

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "absl/status/status.h"

namespace tunefleet {
namespace trainer {

class MetricsLog {
 public:
  MetricsLog() = default;
  ~MetricsLog();
  MetricsLog(const MetricsLog&) = delete;
  MetricsLog& operator=(const MetricsLog&) = delete;

  // Truncates `path` (resume_step < 0) or keeps its lines with step <= resume_step.
  absl::Status Open(const std::string& path, int64_t resume_step = -1);
  // `samples` >= 0 is written as "samples" after "step"; < 0: no such field.
  absl::Status Append(int64_t step, const std::map<std::string, double>& values,
                      int64_t samples = -1);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

// One JSON line (no newline) as Append writes it.
std::string MetricsLine(int64_t step, const std::map<std::string, double>& values,
                        int64_t samples = -1);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_IO_METRICS_LOG_H_
