// The charts of `hpo report` (hpo/report/report.h), each an inline SVG with its legend
// (hpo/report/svg_chart.h): the metric against lr per batch size, every trial's learning curve, and
// one small scatter per other parameter. Colours are batch sizes, markers states: a dot for a
// COMPLETE trial's value, a ring for a PRUNED trial's last report (its prune point), a square
// for a RUNNING trial's last report, a cross for a FAIL (on the bottom axis where it has no
// value), a star for the best trial. Each point links to its trial's row ("#trial-N") and has a
// hover title.
// Guarantees: journal text is escaped; a chart without data says so in one line.
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_REPORT_REPORT_CHARTS_H_
#define TUNEFLEET_HPO_REPORT_REPORT_CHARTS_H_

#include <string>

#include "hpo/report/report_view.h"

namespace tunefleet {
namespace hpo {

// The metric against lr (log x axis), one series per batch size, `width` px wide.
std::string LrChart(const ReportView& v, int width);
// Each trial's reports against the resource axis (samples seen), its end marked by its state.
std::string CurvesChart(const ReportView& v, int width);
// For each of v.other_params, its value (log, linear or category axis as its distribution)
// against the metric; "" without other params.
std::string OtherParamCharts(const ReportView& v);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_REPORT_CHARTS_H_
