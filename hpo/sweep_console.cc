#include "hpo/sweep_console.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "hpo/running_trials.h"

namespace tunefleet {
namespace hpo {

SweepConsole::SweepConsole(bool live, std::ostream* out, Render render)
    : live_(live), out_(out), render_(std::move(render)) {}

void SweepConsole::Print(const std::string& lines) {
  if (live_) {
    block_.Above(lines);
    Show(/*force=*/true);
    return;
  }
  // Piped to a file or another program, each event still shows up as it happens.
  *out_ << lines << std::flush;
}

void SweepConsole::Show(bool force) {
  if (!live_ || !block_.Due(force, absl::Now())) return;
  block_.Draw(render_(std::max(4, LiveBlock::TerminalRows() - 4)));
}

std::string TrialEndLines(const ProgressTable& table, const SweepConfig& config, const Trial& t,
                          const SweepEngine::Ended& ended, std::optional<absl::Duration> ran,
                          bool live) {
  // Every event as a line; on a terminal, where the live table shows them, failures alone.
  if (live && t.state != TrialState::kFail) return "";
  std::string text = table.EventLine(t, ran);
  if (t.state == TrialState::kFail && (ended.retried || ended.gave_up || ended.refused) &&
      !t.stderr_tail.empty()) {
    // A program's traceback is its last 20 lines; the trainer's error, its last line.
    text += StderrLines(t.stderr_tail, config.trainer.program ? 20 : 1);
  }
  if (ended.gave_up) {
    absl::StrAppend(&text, "  giving up on this point after ", config.max_failures_per_trial + 1,
                    " failed attempt(s)\n");
  }
  if (ended.refused) {
    text +=
        "  not retried: the same trial would fail the same way (fix it, then --resume "
        "runs the point again)\n";
  }
  return text;
}

}  // namespace hpo
}  // namespace tunefleet
