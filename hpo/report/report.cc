#include "hpo/report/report.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "hpo/report/report_charts.h"
#include "hpo/report/report_timeline.h"
#include "hpo/report/report_view.h"
#include "hpo/report/svg_chart.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr int kWide = 1100;  // px: the full-width charts

// The page's only style: system fonts, no external resource.
constexpr char kReportCss[] = R"css(
body{margin:0;background:#f4f5f7;color:#222;
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:12px 20px 40px}
h1{margin:10px 0 2px;font-size:24px}
h2{font-size:18px;margin:2px 0 6px}
nav{display:flex;flex-wrap:wrap;gap:4px 16px;margin:6px 0 0}
a{color:#1f5fa8;text-decoration:none}
a:hover{text-decoration:underline}
section{background:#fff;border:1px solid #e1e3e8;border-radius:8px;padding:12px 18px 16px;
  margin:14px 0}
.dim{color:#666}
.none{color:#666;font-style:italic}
.cards{display:flex;flex-wrap:wrap;gap:14px}
.card{flex:1 1 300px;margin:0;display:grid;grid-template-columns:max-content 1fr;gap:3px 12px;
  align-content:start;background:#fafbfc;border:1px solid #eceef1;border-radius:6px;
  padding:10px 14px}
.card dt{color:#666}
.card dd{margin:0;min-width:0}
.card .big{font-size:20px;font-weight:600}
.card .warn{grid-column:1/-1;color:#a15c00}
.card .head{grid-column:1/-1;font-weight:600;color:#222}
.card code{font-size:12px;overflow-wrap:anywhere}
.badge{display:inline-block;color:#fff;border-radius:9px;padding:0 7px;font-size:11.5px;
  font-weight:600;white-space:nowrap}
svg.chart{display:block;max-width:100%;height:auto}
svg text{font-size:11px;fill:#444}
svg text.axis{font-size:12.5px;fill:#222}
svg text.in{fill:#fff;font-size:10px;font-weight:600;pointer-events:none}
svg .gl{stroke:#eceef1}
svg .frame{fill:none;stroke:#b8bcc4}
svg .trend{opacity:.4}
svg .curve{opacity:.7}
svg .curve:hover{stroke-width:4;opacity:1}
svg .curve.best{opacity:1}
svg .pt:hover *,svg .bar:hover rect{stroke:#000}
.legend{display:flex;flex-wrap:wrap;gap:2px 16px;margin:4px 0 0 56px;font-size:12px;color:#333}
.legend span{display:inline-flex;align-items:center;gap:4px}
.scroll{overflow-x:auto}
td.st{white-space:nowrap}
tr.has-note td{border-bottom:none}
tr.note td{padding-top:0;color:#9b2c2c}
table.grid{border-collapse:collapse;width:100%;font-size:12.5px}
table.grid th,table.grid td{border-bottom:1px solid #eceef1;padding:3px 7px;text-align:left;
  vertical-align:top}
table.grid th{background:#f3f4f6;vertical-align:bottom}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.best td{background:#fff6cc}
tr:target td{background:#dde9ff}
.meter{display:inline-block;width:80px;height:8px;background:#e8e8e8;border-radius:4px;
  vertical-align:middle;overflow:hidden}
.meter span{display:block;height:100%;background:#4a7fc1}
details pre{white-space:pre-wrap;max-width:520px;font-size:11px;background:#f6f6f6;padding:6px;
  margin:4px 0}
.small-multiples{display:flex;flex-wrap:wrap;gap:10px 18px}
figure{margin:0}
figcaption{font-size:13px}
)css";

std::string E(const std::string& s) { return EscapeHtml(s); }

// When the trial started, after the sweep's first start ("+3m 07s"; the cell's title has the
// datetime); "" before it started.
std::string StartText(const ReportView& v, const Trial& t) {
  std::optional<absl::Time> start = ParseTrialTime(t.datetime_start);
  if (!start.has_value() || v.timeline.spans.empty()) return "";
  return "+" + DurationText(*start - v.timeline.first_start);
}

std::string Summary(const ReportView& v) {
  std::map<TrialState, int> counts;
  std::set<int64_t> points;
  for (const Trial& t : v.study().trials) {
    ++counts[t.state];
    if (t.point >= 0) points.insert(t.point);
  }
  std::vector<std::string> by_state;
  for (TrialState s : {TrialState::kComplete, TrialState::kPruned, TrialState::kFail,
                       TrialState::kRunning, TrialState::kWaiting}) {
    if (counts[s] > 0) {
      by_state.push_back(absl::StrCat("<span class=\"badge\" style=\"background:", StateColor(s),
                                      "\">", counts[s], " ",
                                      absl::AsciiStrToLower(TrialStateName(s)), "</span>"));
    }
  }
  std::string out =
      "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\"><dl class=\"card\">";
  absl::StrAppend(&out, "<dt>study</dt><dd>", E(v.contents->study_name), "</dd><dt>metric</dt><dd>",
                  E(v.metric), " (", v.contents->maximize ? "maximize" : "minimize",
                  ")</dd><dt>trials</dt><dd>", v.study().trials.size(), " ",
                  absl::StrJoin(by_state, " "), "</dd>");
  if (!points.empty()) {
    absl::StrAppend(&out, "<dt>points</dt><dd>", points.size(), " distinct</dd>");
  }
  const SweepTimeline& tl = v.timeline;
  if (!tl.spans.empty()) {
    absl::StrAppend(&out, "<dt>wall time</dt><dd>", DurationText(tl.Wall()),
                    " <span class=\"dim\">(",
                    E(absl::FormatTime("%Y-%m-%d %H:%M:%S", tl.first_start, absl::UTCTimeZone())),
                    " to ", E(absl::FormatTime("%H:%M:%S", tl.last_seen, absl::UTCTimeZone())),
                    ")</span></dd><dt>trial time</dt><dd>", DurationText(tl.TrialTime()), "</dd>");
    if (std::optional<double> busy = tl.BusyShare()) {
      absl::StrAppend(&out, "<dt>slots</dt><dd>", tl.placed_lanes, ", busy ",
                      absl::StrFormat("%.0f%%", 100 * *busy), " of the wall time</dd>");
    }
  }
  out += "</dl><dl class=\"card best\">";
  if (v.best == nullptr) {
    out += "<dt>best trial</dt><dd>none has completed yet</dd>";
  } else {
    const Trial& b = *v.best;
    absl::StrAppend(&out, "<dt>best trial</dt><dd><a href=\"", TrialAnchor(b), "\">#", b.number,
                    "</a> (", E(b.phase.empty() ? "" : b.phase + " phase"), ")</dd><dt>",
                    E(v.metric), "</dt><dd class=\"big\">", NumberText(*b.value), "</dd>");
    for (const auto& [name, value] : b.params) {
      absl::StrAppend(&out, "<dt>", E(name), "</dt><dd>", E(ParamText(v, b, name)), "</dd>");
    }
    absl::StrAppend(&out, "<dt>lr_effective</dt><dd>", NumberText(b.lr_effective, "%.3e"), "</dd>");
    if (!b.placement.empty()) absl::StrAppend(&out, "<dt>ran on</dt><dd>", E(b.placement), "</dd>");
  }
  if (auto at = v.contents->study_user_attrs.find("best_at_bound");
      at != v.contents->study_user_attrs.end()) {
    auto bounds = nlohmann::json::parse(at->second, nullptr, /*allow_exceptions=*/false);
    if (bounds.is_object()) {
      for (const auto& [name, side] : bounds.items()) {
        if (!side.is_string()) continue;
        absl::StrAppend(&out, "<dd class=\"warn\">best ", E(name), " at the ",
                        E(side.get<std::string>()), " bound of its range: widen parameters.",
                        E(name), "</dd>");
      }
    }
  }
  out += "</dl><dl class=\"card attrs\"><dt class=\"head\">sweep settings</dt>";
  for (const auto& [key, raw] : v.contents->study_user_attrs) {
    if (key == "metric" || key == "best_at_bound") continue;
    absl::StrAppend(&out, "<dt>", E(key), "</dt><dd><code>", E(raw), "</code></dd>");
  }
  out += "</dl></div></section>\n";
  return out;
}

std::string TelemetryTable(const ReportView& v) {
  std::string rows;
  double energy = 0;
  int n = 0;
  for (const Trial& t : v.study().trials) {
    if (!t.gpu_util_mean && !t.gpu_mem_peak_mib && !t.gpu_energy_j) continue;
    ++n;
    std::string util = "-";
    if (t.gpu_util_mean) {
      util = absl::StrFormat(
          "<span class=\"meter\"><span style=\"width:%.0f%%\"></span></span> %.0f%%",
          std::clamp(*t.gpu_util_mean, 0.0, 100.0), *t.gpu_util_mean);
    }
    std::string power = "-";
    auto start = ParseTrialTime(t.datetime_start), end = ParseTrialTime(t.datetime_complete);
    if (t.gpu_energy_j && start && end && *end > *start) {
      power = absl::StrFormat("%.0f", *t.gpu_energy_j / absl::ToDoubleSeconds(*end - *start));
    }
    if (t.gpu_energy_j) energy += *t.gpu_energy_j;
    absl::StrAppend(&rows, "<tr><td><a href=\"", TrialAnchor(t), "\">#", t.number, "</a></td><td>",
                    TrialStateName(t.state), "</td><td>", E(t.placement), "</td><td>", util,
                    "</td><td class=\"num\">",
                    t.gpu_mem_peak_mib ? NumberText(*t.gpu_mem_peak_mib, "%.0f") : "-",
                    "</td><td class=\"num\">",
                    t.gpu_energy_j ? NumberText(*t.gpu_energy_j, "%.0f") : "-",
                    "</td><td class=\"num\">", power, "</td></tr>\n");
  }
  if (n == 0) {
    return "<p class=\"none\">No GPU telemetry was recorded (no agent could read NVML, or the "
           "trials ran on CPU slots).</p>\n";
  }
  return absl::StrCat(
      "<p>", n, " trial(s) with telemetry; energy of all their GPUs together: ",
      NumberText(energy / 1000.0, "%.1f"),
      " kJ.</p>\n<table class=\"grid\"><thead><tr><th>trial</th>"
      "<th>state</th><th>placement</th><th>GPU util (mean)</th><th>peak memory (MiB)</th>"
      "<th>energy (J)</th><th>mean power (W)</th></tr></thead><tbody>\n",
      rows, "</tbody></table>\n");
}

// A column heading that may break after '.', '_' and '/' (long parameter names).
std::string Heading(const std::string& name) {
  std::string out;
  for (char c : E(name)) {
    out += c;
    if (c == '.' || c == '_' || c == '/') out += "<wbr>";
  }
  return out;
}

// One row per trial (id="trial-N"), and under a trial with a fail reason, a retry link or a
// stderr tail, a second row with them across the table.
std::string TrialsTable(const ReportView& v) {
  std::string out =
      "<div class=\"scroll\"><table class=\"grid trials\"><thead><tr><th>trial</th>"
      "<th>state</th><th>phase</th>";
  absl::StrAppend(&out, "<th>", kLrParam, "</th><th>", Heading(kBatchParam), "</th>");
  for (const std::string& name : v.other_params) {
    absl::StrAppend(&out, "<th>", Heading(name), "</th>");
  }
  absl::StrAppend(&out, "<th>", Heading(v.metric), "</th><th>last report</th><th>",
                  Heading("lr_effective"),
                  "</th><th>placement</th><th>started</th><th>duration</th></tr></thead><tbody>\n");
  const size_t columns = 11 + v.other_params.size();
  std::map<int64_t, const TrialSpan*> spans;
  for (const TrialSpan& s : v.timeline.spans) spans[s.number] = &s;
  for (const Trial& t : v.study().trials) {
    std::vector<std::string> notes;
    if (!t.fail_reason.empty()) notes.push_back(E(t.fail_reason));
    if (t.failed_trial) {
      notes.push_back(absl::StrCat("retry of <a href=\"#trial-", *t.failed_trial, "\">#",
                                   *t.failed_trial, "</a>"));
    }
    if (!t.stderr_tail.empty()) {
      notes.push_back(absl::StrCat("<details><summary>stderr</summary><pre>", E(t.stderr_tail),
                                   "</pre></details>"));
    }
    std::vector<std::string> classes;
    if (&t == v.best) classes.push_back("best");
    if (!notes.empty()) classes.push_back("has-note");
    absl::StrAppend(
        &out, "<tr id=\"trial-", t.number, "\"",
        classes.empty() ? "" : absl::StrCat(" class=\"", absl::StrJoin(classes, " "), "\""),
        "><td class=\"num\">", t.number,
        "</td><td class=\"st\"><span class=\"badge\" style=\"background:", StateColor(t.state),
        "\">", TrialStateName(t.state), "</span>", &t == v.best ? " <b>best</b>" : "", "</td><td>",
        E(t.phase), "</td><td class=\"num\">", E(ParamText(v, t, kLrParam)),
        "</td><td class=\"num\">", E(ParamText(v, t, kBatchParam)), "</td>");
    for (const std::string& name : v.other_params) {
      absl::StrAppend(&out, "<td class=\"num\">", E(ParamText(v, t, name)), "</td>");
    }
    const auto last = LastReport(t);
    const auto span = spans.find(t.number);
    absl::StrAppend(
        &out, "<td class=\"num\">", t.value ? NumberText(*t.value) : "", "</td><td class=\"num\">",
        last ? absl::StrCat(NumberText(last->second), " <span class=\"dim\">@", last->first,
                            "</span>")
             : "",
        "</td><td class=\"num\">", t.lr_effective > 0 ? NumberText(t.lr_effective, "%.3e") : "",
        "</td><td>", E(t.placement), "</td><td class=\"num\" title=\"", E(t.datetime_start), "\">",
        StartText(v, t), "</td><td class=\"num\">",
        span == spans.end() ? "" : DurationText(span->second->end - span->second->start),
        span != spans.end() && span->second->running ? " so far" : "", "</td></tr>\n");
    if (!notes.empty()) {
      absl::StrAppend(&out, "<tr class=\"note\"><td></td><td colspan=\"", columns - 1, "\">",
                      absl::StrJoin(notes, " &middot; "), "</td></tr>\n");
    }
  }
  out += "</tbody></table></div>\n";
  return out;
}

}  // namespace

absl::StatusOr<std::string> RenderHtmlReport(const JournalContents& contents,
                                             const std::string& journal_path) {
  if (contents.study_name.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(journal_path, ": the journal holds no study yet"));
  }
  const ReportView v = BuildReportView(contents, journal_path);
  const std::string title = absl::StrCat("Sweep ", contents.study_name);
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      E(title), "</title>\n<style>\n", kReportCss, "</style></head>\n<body><main>\n<header><h1>",
      E(title), "</h1><p class=\"dim\">hpo report of <code>", E(journal_path), "</code>",
      v.timeline.spans.empty()
          ? ""
          : absl::StrCat(", as of ", E(absl::FormatTime("%Y-%m-%d %H:%M:%S", v.timeline.last_seen,
                                                        absl::UTCTimeZone()))),
      "</p><nav><a href=\"#summary\">summary</a><a href=\"#lr\">metric vs lr</a>"
      "<a href=\"#curves\">learning curves</a><a href=\"#timeline\">timeline</a>"
      "<a href=\"#gpu\">GPU telemetry</a>",
      v.other_params.empty() ? "" : "<a href=\"#params\">other parameters</a>",
      "<a href=\"#trials\">all trials</a></nav></header>\n");
  html += Summary(v);
  absl::StrAppend(
      &html, "<section id=\"lr\"><h2>", E(v.metric),
      " against lr, by batch size</h2>\n<p class=\"dim\">Final values of completed trials; "
      "pruned and running trials at their last report; failed trials on the bottom axis. "
      "Click a point for its row.</p>\n",
      LrChart(v, kWide), "</section>\n");
  absl::StrAppend(&html, "<section id=\"curves\"><h2>Learning curves</h2>\n<p class=\"dim\">",
                  E(v.metric), " at each report against ", E(v.step_label),
                  "; hover a curve to see its trial.</p>\n", CurvesChart(v, kWide), "</section>\n");
  absl::StrAppend(
      &html,
      "<section id=\"timeline\"><h2>Timeline</h2>\n<p class=\"dim\">One lane per "
      "agent:slot (GPU); a multi-GPU trial fills each of its lanes; gaps are idle slots.</p>\n",
      TimelineSvg(contents.study, v.timeline, kWide), "</section>\n");
  absl::StrAppend(&html, "<section id=\"gpu\"><h2>GPU telemetry</h2>\n", TelemetryTable(v),
                  "</section>\n");
  if (!v.other_params.empty()) {
    absl::StrAppend(&html, "<section id=\"params\"><h2>Other parameters</h2>\n",
                    OtherParamCharts(v), "</section>\n");
  }
  absl::StrAppend(&html, "<section id=\"trials\"><h2>All trials</h2>\n", TrialsTable(v),
                  "</section>\n");
  html += "</main></body></html>\n";
  return html;
}

absl::Status WriteHtmlReport(const std::string& journal_path, const std::string& html_path,
                             int64_t* trials) {
  struct stat a {
  }, b{};
  if (html_path == journal_path ||
      (::stat(journal_path.c_str(), &a) == 0 && ::stat(html_path.c_str(), &b) == 0 &&
       a.st_dev == b.st_dev && a.st_ino == b.st_ino)) {
    return absl::InvalidArgumentError(
        absl::StrCat(html_path, ": is the journal itself; name another --output"));
  }
  ASSIGN_OR_RETURN(JournalContents contents, ReadJournal(journal_path));
  ASSIGN_OR_RETURN(std::string html, RenderHtmlReport(contents, journal_path));
  RETURN_IF_ERROR(WriteFileAtomically(html_path, html, ReportModeFor(journal_path)));
  if (trials != nullptr) *trials = static_cast<int64_t>(contents.study.trials.size());
  return absl::OkStatus();
}

mode_t ReportModeFor(const std::string& journal_path) {
  struct stat st;
  if (::stat(journal_path.c_str(), &st) != 0) return 0666;
  return st.st_mode & 0666;
}

std::string ReportPathFor(const std::string& journal_path) {
  const size_t slash = journal_path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = journal_path.rfind('.');
  if (dot == std::string::npos || dot <= base ||
      journal_path.compare(dot, std::string::npos, ".html") == 0) {
    return journal_path + ".html";
  }
  return journal_path.substr(0, dot) + ".html";
}

}  // namespace hpo
}  // namespace tunefleet
