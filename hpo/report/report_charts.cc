#include "hpo/report/report_charts.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hpo/report/svg_chart.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kBestColor[] = "#ffd23f";
constexpr char kLegendGrey[] = "#666";

Marker StateMarker(TrialState s) {
  switch (s) {
    case TrialState::kComplete:
      return Marker::kDot;
    case TrialState::kPruned:
      return Marker::kRing;
    case TrialState::kFail:
      return Marker::kCross;
    default:
      return Marker::kSquare;
  }
}

// The batch sizes' legend, then the state markers' for the states some trial is in: `labels`
// of COMPLETE, PRUNED, FAIL and RUNNING (WAITING trials are drawn as RUNNING ones).
void AddLegend(const ReportView& v, SvgChart* chart, const std::vector<std::string>& labels) {
  for (double b : v.batches) {
    chart->Legend(absl::StrCat(kBatchParam, " ", ShortNumber(b)), Marker::kDot, SeriesColor(v, b));
  }
  std::set<TrialState> present;
  for (const Trial& t : v.study().trials) {
    present.insert(t.state == TrialState::kWaiting ? TrialState::kRunning : t.state);
  }
  const TrialState states[] = {TrialState::kComplete, TrialState::kPruned, TrialState::kFail,
                               TrialState::kRunning};
  for (size_t i = 0; i < labels.size() && i < std::size(states); ++i) {
    if (present.count(states[i])) chart->Legend(labels[i], StateMarker(states[i]), kLegendGrey);
  }
}

// A point's hover text: trial, state, params, score, fail reason (plain; the chart escapes it).
std::string PointTitle(const ReportView& v, const Trial& t) {
  std::string out = absl::StrCat("trial ", t.number, " (", TrialStateName(t.state), ")");
  for (const auto& [name, value] : t.params) {
    absl::StrAppend(&out, "\n", name, " ", ParamText(v, t, name));
  }
  if (t.state == TrialState::kComplete && t.value) {
    absl::StrAppend(&out, "\n", v.metric, " ", NumberText(*t.value));
  } else if (auto last = LastReport(t)) {
    absl::StrAppend(&out, "\n", v.metric, " ", NumberText(last->second), " at ", last->first,
                    " (last report)");
  }
  if (!t.fail_reason.empty()) absl::StrAppend(&out, "\n", t.fail_reason);
  return out;
}

}  // namespace

std::string LrChart(const ReportView& v, int width) {
  std::vector<double> xs, ys;
  for (const Trial& t : v.study().trials) {
    if (auto lr = t.params.find(kLrParam); lr != t.params.end()) xs.push_back(lr->second);
    if (auto y = ChartValue(t)) ys.push_back(*y);
  }
  if (xs.empty()) return "<p class=\"none\">No trial has an lr.</p>\n";
  // The searched range too, so a best point at its edge shows as such.
  const Distribution* d = LatestDistribution(*v.contents, kLrParam);
  if (d != nullptr && d->kind == Distribution::Kind::kFloat) {
    xs.push_back(d->low);
    xs.push_back(d->high);
  }
  auto [xlo, xhi] = PaddedRange(xs, AxisScale::kLog, 0.03);
  auto [ylo, yhi] = PaddedRange(ys, AxisScale::kLinear, 0.08);
  SvgChart chart(width, 420, {AxisScale::kLog, xlo, xhi, "lr (log scale)"},
                 {AxisScale::kLinear, ylo, yhi, v.metric});
  // A thin line through each batch size's completed trials, by lr.
  std::map<double, std::vector<std::pair<double, double>>> series;
  for (const Trial& t : v.study().trials) {
    auto lr = t.params.find(kLrParam);
    auto b = t.params.find(kBatchParam);
    if (lr != t.params.end() && b != t.params.end() && t.state == TrialState::kComplete &&
        t.value) {
      series[b->second].push_back({lr->second, *t.value});
    }
  }
  for (auto& [batch, points] : series) {
    std::sort(points.begin(), points.end());
    chart.Line(points, SeriesColor(v, batch), absl::StrCat(kBatchParam, " ", ShortNumber(batch)),
               1.2, "trend");
  }
  for (const Trial& t : v.study().trials) {
    auto lr = t.params.find(kLrParam);
    if (lr == t.params.end()) continue;
    std::optional<double> y = ChartValue(t);
    if (t.state == TrialState::kFail) y = chart.y_bottom();
    if (!y) continue;
    chart.Point(lr->second, *y, StateMarker(t.state), TrialColor(v, t), PointTitle(v, t),
                TrialAnchor(t));
  }
  if (v.best != nullptr && v.best->params.count(kLrParam)) {
    chart.Point(v.best->params.at(kLrParam), *v.best->value, Marker::kStar, kBestColor,
                PointTitle(v, *v.best) + "\nbest", TrialAnchor(*v.best));
  }
  AddLegend(v, &chart,
            {"complete: final value", "pruned: last report", "failed (on the axis)",
             "running: last report"});
  if (v.best != nullptr) {
    chart.Legend(absl::StrCat("best: #", v.best->number), Marker::kStar, kBestColor);
  }
  return chart.Render();
}

std::string CurvesChart(const ReportView& v, int width) {
  std::vector<double> xs = {0}, ys;
  for (const Trial& t : v.study().trials) {
    for (const auto& [step, value] : t.intermediate_values) {
      xs.push_back(static_cast<double>(step));
      ys.push_back(value);
    }
  }
  if (ys.empty()) return "<p class=\"none\">No trial has reported yet.</p>\n";
  auto [xlo, xhi] = PaddedRange(xs, AxisScale::kLinear, 0.02);
  auto [ylo, yhi] = PaddedRange(ys, AxisScale::kLinear, 0.06);
  SvgChart chart(width, 440, {AxisScale::kLinear, std::max(0.0, xlo), xhi, v.step_label},
                 {AxisScale::kLinear, ylo, yhi, v.metric});
  for (const Trial& t : v.study().trials) {
    std::vector<std::pair<double, double>> points;
    for (const auto& [step, value] : t.intermediate_values) {
      points.push_back({static_cast<double>(step), value});
    }
    const bool best = &t == v.best;
    chart.Line(points, TrialColor(v, t), PointTitle(v, t), best ? 2.6 : 1.3,
               best ? "curve best" : "curve");
  }
  for (const Trial& t : v.study().trials) {
    if (auto last = LastFiniteReport(t)) {
      chart.Point(static_cast<double>(last->first), last->second, StateMarker(t.state),
                  TrialColor(v, t), PointTitle(v, t), TrialAnchor(t));
    }
  }
  if (v.best != nullptr) {
    if (auto last = LastFiniteReport(*v.best)) {
      chart.Point(static_cast<double>(last->first), last->second, Marker::kStar, kBestColor,
                  PointTitle(v, *v.best) + "\nbest", TrialAnchor(*v.best));
    }
  }
  AddLegend(v, &chart, {"ran to the end", "pruned here", "failed after this report", "running"});
  return chart.Render();
}

std::string OtherParamCharts(const ReportView& v) {
  if (v.other_params.empty()) return "";
  std::string out = "<div class=\"small-multiples\">";
  for (const std::string& name : v.other_params) {
    const Distribution* d = LatestDistribution(*v.contents, name);
    Axis x{AxisScale::kLinear, 0, 1, name};
    std::vector<double> xs, ys;
    for (const Trial& t : v.study().trials) {
      auto p = t.params.find(name);
      if (p == t.params.end()) continue;
      xs.push_back(p->second);
      if (auto y = ChartValue(t)) ys.push_back(*y);
    }
    if (d != nullptr && d->kind == Distribution::Kind::kCategorical) {
      x.scale = AxisScale::kCategory;
      for (double c : d->choices) x.categories.push_back(d->ValueText(c));
    } else {
      if (d != nullptr) {
        if (d->log) x.scale = AxisScale::kLog;
        xs.push_back(d->low);
        xs.push_back(d->high);
      }
      std::tie(x.lo, x.hi) = PaddedRange(xs, x.scale, 0.05);
      if (d != nullptr && d->kind == Distribution::Kind::kInt && d->high - d->low <= 12) {
        for (double i = d->low; i <= d->high; ++i) x.ticks.push_back(i);
      }
    }
    auto [ylo, yhi] = PaddedRange(ys, AxisScale::kLinear, 0.08);
    SvgChart chart(360, 250, x, {AxisScale::kLinear, ylo, yhi, v.metric}, 58);
    for (const Trial& t : v.study().trials) {
      auto p = t.params.find(name);
      if (p == t.params.end()) continue;
      double px = p->second;
      if (x.scale == AxisScale::kCategory) {
        // A categorical param holds the choice itself (a string choice: its index).
        auto at = std::find(d->choices.begin(), d->choices.end(), px);
        if (at == d->choices.end()) continue;
        px = static_cast<double>(at - d->choices.begin());
      }
      std::optional<double> y = ChartValue(t);
      if (t.state == TrialState::kFail) y = chart.y_bottom();
      if (!y) continue;
      chart.Point(px, *y, StateMarker(t.state), TrialColor(v, t), PointTitle(v, t), TrialAnchor(t));
    }
    absl::StrAppend(&out, "<figure><figcaption><b>", EscapeHtml(name), "</b> <span class=\"dim\">",
                    EscapeHtml(d != nullptr ? d->Describe() : ""), "</span></figcaption>",
                    chart.Render(), "</figure>\n");
  }
  out +=
      "</div>\n<p class=\"dim\">Colours are batch sizes and markers states, as in the lr "
      "chart.</p>\n";
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
