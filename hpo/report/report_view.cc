#include "hpo/report/report_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hpo/report/progress_table.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr const char* kSeriesColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
                                         "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#d62728"};
constexpr char kNoSeries[] = "#666";

}  // namespace

ReportView BuildReportView(const JournalContents& contents, const std::string& journal_path) {
  ReportView v;
  v.contents = &contents;
  v.journal_path = journal_path;
  if (std::string metric = StringAttr(contents, "metric"); !metric.empty()) v.metric = metric;
  if (StringAttr(contents, "resource") == "samples") v.step_label = "samples seen";
  std::set<double> batches;
  std::set<std::string> others;
  for (const Trial& t : contents.study.trials) {
    for (const auto& [name, value] : t.params) {
      if (name == kBatchParam) {
        batches.insert(value);
      } else if (name != kLrParam) {
        others.insert(name);
      }
    }
  }
  v.batches.assign(batches.begin(), batches.end());
  v.other_params.assign(others.begin(), others.end());
  v.best = ProgressTable::Best(contents.study);
  v.timeline = BuildTimeline(contents.study);
  return v;
}

std::string StringAttr(const JournalContents& contents, const std::string& key) {
  auto it = contents.study_user_attrs.find(key);
  if (it == contents.study_user_attrs.end()) return "";
  auto v = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  return v.is_string() ? v.get<std::string>() : "";
}

const Distribution* DistributionOf(const JournalContents& contents, const Trial& t,
                                   const std::string& name) {
  const size_t i = static_cast<size_t>(t.number);
  if (t.number < 0 || i >= contents.distributions.size()) return nullptr;
  auto it = contents.distributions[i].find(name);
  return it == contents.distributions[i].end() ? nullptr : &it->second;
}

const Distribution* LatestDistribution(const JournalContents& contents, const std::string& name) {
  for (auto it = contents.study.trials.rbegin(); it != contents.study.trials.rend(); ++it) {
    if (const Distribution* d = DistributionOf(contents, *it, name)) return d;
  }
  return nullptr;
}

std::string ParamText(const ReportView& v, const Trial& t, const std::string& name) {
  auto p = t.params.find(name);
  if (p == t.params.end()) return "";
  const Distribution* d = DistributionOf(*v.contents, t, name);
  if (d != nullptr && d->kind != Distribution::Kind::kFloat) return d->ValueText(p->second);
  if (d != nullptr && d->log) return absl::StrFormat("%.3e", p->second);
  return absl::StrFormat("%.4g", p->second);
}

std::string NumberText(double v, const char* fmt) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
  char text[64];
  std::snprintf(text, sizeof(text), fmt, v);
  return text;
}

std::optional<std::pair<int64_t, double>> LastReport(const Trial& t) {
  if (t.intermediate_values.empty()) return std::nullopt;
  return *t.intermediate_values.rbegin();
}

std::optional<std::pair<int64_t, double>> LastFiniteReport(const Trial& t) {
  for (auto it = t.intermediate_values.rbegin(); it != t.intermediate_values.rend(); ++it) {
    if (std::isfinite(it->second)) return *it;
  }
  return std::nullopt;
}

std::optional<double> ChartValue(const Trial& t) {
  if (t.state == TrialState::kComplete && t.value.has_value()) return *t.value;
  if (auto last = LastFiniteReport(t)) return last->second;
  return std::nullopt;
}

const char* SeriesColor(const ReportView& v, double batch) {
  const auto it = std::lower_bound(v.batches.begin(), v.batches.end(), batch);
  return kSeriesColors[static_cast<size_t>(it - v.batches.begin()) % std::size(kSeriesColors)];
}

const char* TrialColor(const ReportView& v, const Trial& t) {
  auto b = t.params.find(kBatchParam);
  return b == t.params.end() ? kNoSeries : SeriesColor(v, b->second);
}

std::string TrialAnchor(const Trial& t) { return absl::StrCat("#trial-", t.number); }

}  // namespace hpo
}  // namespace tunefleet
