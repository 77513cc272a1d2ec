// The sweep's HTML report (hpo/report/report.h) kept current during a sweep at a cost that does not
// grow with each trial: hpo hands it a snapshot of the study from memory (SweepEngine::Snapshot;
// the journal is never read during a sweep) when something changed, and it renders and writes the
// page on a thread of its own, at most once per `interval`, and never more often than every ten
// times the last write took (a page of 10,000 trials takes about a second to draw: the report
// then costs at most a tenth of a core, however long the sweep); changes meanwhile wait for the
// next write. Flush writes the last state and waits, for the end of a sweep.
//
//   ReportWriter writer(journal, ReportPathFor(journal), absl::Seconds(5));
//   writer.Changed();                                          // after each trial's end
//   writer.Tick(absl::Now(), [&] { return engine.Snapshot(); });  // every poll loop turn
//   writer.Flush(engine.Snapshot());                           // at the end
//
// A write that fails is logged once (the sweep goes on; `hpo report` writes the page later).
// Thread-safety: Changed, Tick and Flush from one thread (the poll loop); the writing thread
// touches only the snapshot it was given.
#ifndef TUNEFLEET_HPO_REPORT_REPORT_WRITER_H_
#define TUNEFLEET_HPO_REPORT_REPORT_WRITER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "hpo/journal/journal_replay.h"

namespace tunefleet {
namespace hpo {

class ReportWriter {
 public:
  ReportWriter(std::string journal_path, std::string html_path, absl::Duration interval);
  ~ReportWriter();  // waits for a write in progress
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  // The study changed: the next Tick past the interval writes it.
  void Changed() { dirty_ = true; }
  // Starts a write of snapshot() when the study changed and both `interval` and ten times the
  // last write's duration passed since the last one started (it is then done, or nearly).
  void Tick(absl::Time now, const std::function<JournalContents()>& snapshot);
  // Waits for a write in progress, then writes `contents` on this thread.
  absl::Status Flush(const JournalContents& contents);

 private:
  void Join();
  absl::Status Write(const JournalContents& contents);

  const std::string journal_path_;
  const std::string html_path_;
  const absl::Duration interval_;
  bool dirty_ = false;
  absl::Time last_start_ = absl::InfinitePast();
  std::thread thread_;
  std::atomic<bool> warned_{false};
  std::atomic<int64_t> last_write_us_{0};  // how long the last write took
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_REPORT_WRITER_H_
