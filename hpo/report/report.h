// `hpo report`: one self-contained HTML page describing a sweep from its journal, to open from
// a laptop after scp. It shows the sweep's summary and best trial; the metric against lr per
// batch size (pruned trials at their last report, failed ones on the axis); every trial's
// learning curve with its prune point; a timeline with one lane per agent:slot; the GPU
// telemetry; the other searched parameters against the metric; and a table of all trials
// (row id="trial-N", which the charts' points and bars link to).
//
//   ASSIGN_OR_RETURN(std::string html, RenderHtmlReport(contents, journal_path));
//   RETURN_IF_ERROR(WriteHtmlReport("runs/x/journal.log", ReportPathFor("runs/x/journal.log")));
//
// Guarantees: the page references nothing outside itself: an inline stylesheet and inline SVG
// charts drawn here, no script, no font, image or link but "#..." anchors (no "://" at all).
// Every text taken from the journal (names, params, placements, fail reasons, stderr tails,
// study attrs) is HTML-escaped. The same contents give the same bytes. `hpo sweep` rewrites
// the page beside its journal whenever a trial ends (hpo/sweep_driver.h).
// Thread-safety: pure functions; WriteHtmlReport only reads the journal, so it may run while a
// JournalWriter appends (ReadJournal ignores a half-written last line).
#ifndef TUNEFLEET_HPO_REPORT_REPORT_H_
#define TUNEFLEET_HPO_REPORT_REPORT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hpo/journal/journal_replay.h"

namespace tunefleet {
namespace hpo {

// The page for `contents`; `journal_path` is only named on it. FailedPrecondition when the
// journal holds no study yet.
absl::StatusOr<std::string> RenderHtmlReport(const JournalContents& contents,
                                             const std::string& journal_path);

// Reads the journal at `journal_path` (ReadJournal: NotFound when it is missing) and writes its
// page to `html_path` atomically (a reader sees the old page or the new one, never a part),
// with ReportModeFor(journal_path), never through a link another user planted
// (common/file_util.h's AtomicFile: PermissionDenied naming the path, nothing written).
// InvalidArgument when `html_path` is the journal itself. `trials`, when given, gets the number
// of trials on the page.
absl::Status WriteHtmlReport(const std::string& journal_path, const std::string& html_path,
                             int64_t* trials = nullptr);

// The mode a page (or any other view) of the journal at `journal_path` is created with: the
// journal's read and write bits, so it shows no one what the journal would not (a 0600
// journal's report is 0600); the umask applies on top. 0666 (less the umask) when the journal
// cannot be stat'ed.
mode_t ReportModeFor(const std::string& journal_path);

// Where the page of a journal goes by default: the journal's path with its extension replaced
// by ".html" (runs/x/journal.log -> runs/x/journal.html); without an extension (or for a
// dot-file like ".journal", or a journal already named *.html) ".html" is appended.
std::string ReportPathFor(const std::string& journal_path);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_REPORT_H_
