// What `hpo sweep` shows the user while it runs (hpo/sweep_driver.h owns one): on a terminal,
// the live progress table redrawn in place (hpo/report/live_block.h), with each line for the
// user printed above it; on a pipe or a file, no redraws, and each line as it happens (one
// plain line per finished trial: TrialEndLines), flushed at once.
//
// Thread-safety: the driver's thread only.
#ifndef TUNEFLEET_HPO_SWEEP_CONSOLE_H_
#define TUNEFLEET_HPO_SWEEP_CONSOLE_H_

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "absl/time/time.h"
#include "hpo/config/sweep_config.h"
#include "hpo/report/live_block.h"
#include "hpo/report/progress_table.h"
#include "hpo/sweep_engine.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

class SweepConsole {
 public:
  // The live table, at most `max_rows` trials (ProgressTable::Render).
  using Render = std::function<std::string(int max_rows)>;
  // `live`: redraw the table in place (stdout is a terminal); `out`: where lines go (stdout).
  SweepConsole(bool live, std::ostream* out, Render render);

  bool live() const { return live_; }
  // For lines that go out as they are, live or not (announcements of the head, interruptions).
  std::ostream& out() const { return *out_; }
  // Lines for the user, as they happen: on `out`, flushed, or above the live table.
  void Print(const std::string& lines);
  // Redraws the live table when due (always with `force`); nothing without `live`.
  void Show(bool force);

 private:
  bool live_;
  std::ostream* out_;
  Render render_;
  LiveBlock block_;
};

// What hpo prints when trial `t` ended as `ended` says (`ran`: from its ranks' start to its end,
// when they started): the table's event line
// (ProgressTable::EventLine), then for a failure that is retried, given up or refused its stderr's
// last lines (20 for a program, else 1), and why it is not tried again. Empty where nothing is
// printed: with `live`, the table shows every end but a failure.
std::string TrialEndLines(const ProgressTable& table, const SweepConfig& config, const Trial& t,
                          const SweepEngine::Ended& ended, std::optional<absl::Duration> ran,
                          bool live);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_SWEEP_CONSOLE_H_
