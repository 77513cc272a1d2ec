// What the sections of `hpo report` (hpo/report/report.h) read: a journal's contents and what is
// derived from them once (the metric's name, the batch sizes, the other parameters, the best
// trial, the timeline), and how a trial's params and numbers are written on the page.
//
// Guarantees: the texts returned here are plain (not escaped): callers escape them
// (hpo/report/svg_chart.h's EscapeHtml) where they go into the page.
// Thread-safety: a ReportView is read-only once built; it points into the JournalContents it was
// built from, which must outlive it.
#ifndef TUNEFLEET_HPO_REPORT_REPORT_VIEW_H_
#define TUNEFLEET_HPO_REPORT_REPORT_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpo/journal/journal_replay.h"
#include "hpo/report/report_timeline.h"
#include "hpo/search_space.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

struct ReportView {
  const JournalContents* contents = nullptr;
  std::string journal_path;
  std::string metric = "value";           // study user attr "metric"
  std::string step_label = "step";        // "samples seen" when the resource axis is samples
  std::vector<double> batches;            // distinct batch sizes, ascending
  std::vector<std::string> other_params;  // params besides lr and batch_size, by name
  const Trial* best = nullptr;            // ProgressTable::Best: the best COMPLETE trial
  SweepTimeline timeline;

  const Study& study() const { return contents->study; }
};

ReportView BuildReportView(const JournalContents& contents, const std::string& journal_path);

// The study user attr `key` when it is a JSON string; "" otherwise.
std::string StringAttr(const JournalContents& contents, const std::string& key);

// The distribution of `name` as trial `t` recorded it; the latest one recorded by any trial
// (the space's current shape). nullptr when none.
const Distribution* DistributionOf(const JournalContents& contents, const Trial& t,
                                   const std::string& name);
const Distribution* LatestDistribution(const JournalContents& contents, const std::string& name);

// A param's value as the page shows it: choices and integers as they are ("16", "cls"),
// log-scaled floats as the progress table shows them ("2.154e-04"), others with 4 digits; ""
// when the trial lacks it.
std::string ParamText(const ReportView& v, const Trial& t, const std::string& name);
// `v` with printf format `fmt`; "NaN", "inf", "-inf" for non-finite values.
std::string NumberText(double v, const char* fmt = "%.4f");

// The trial's last report (step, value), and its last finite one (where the charts mark its
// end); nullopt without any.
std::optional<std::pair<int64_t, double>> LastReport(const Trial& t);
std::optional<std::pair<int64_t, double>> LastFiniteReport(const Trial& t);
// What a trial scores on the charts: its value when COMPLETE, else its last finite report.
std::optional<double> ChartValue(const Trial& t);

// The colour of a batch size's series (D3's category10 in batch-size order), and of a trial's
// (grey without a batch size).
const char* SeriesColor(const ReportView& v, double batch);
const char* TrialColor(const ReportView& v, const Trial& t);

// "#trial-N": the trials table's row, which the charts link to.
std::string TrialAnchor(const Trial& t);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_REPORT_VIEW_H_
