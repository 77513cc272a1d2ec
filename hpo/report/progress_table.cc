#include "hpo/report/progress_table.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/shell_quote.h"
#include "hpo/config/sweep_parameters.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

std::string Clock(absl::Duration d) {
  const int64_t s = absl::ToInt64Seconds(d);
  return absl::StrFormat("%02d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
}

std::string LastValue(const Trial& t) {
  if (t.state == TrialState::kComplete && t.value.has_value())
    return absl::StrFormat("%.4f", *t.value);
  if (t.intermediate_values.empty()) return "-";
  return absl::StrFormat("%.4f", t.intermediate_values.rbegin()->second);
}

// A finished trial's GPU telemetry: "  gpu 87% 12.3 GiB 4.5 kJ"; "" without any.
std::string GpuText(const Trial& t) {
  if (!t.gpu_util_mean.has_value()) return "";
  return absl::StrFormat("  gpu %.0f%% %.1f GiB %.1f kJ", *t.gpu_util_mean,
                         t.gpu_mem_peak_mib.value_or(0) / 1024.0,
                         t.gpu_energy_j.value_or(0) / 1000.0);
}

}  // namespace

std::optional<absl::Duration> EstimateRemaining(const std::vector<absl::Duration>& finished,
                                                const std::vector<absl::Duration>& running_for,
                                                int64_t not_started, int parallel) {
  if (finished.empty()) return std::nullopt;
  // What a trial that has run `t` has left: the mean of the finished trials that ran longer
  // than t, less t (a trial still running after the short, pruned ones usually runs to the
  // end); nothing when none ran longer.
  const auto left = [&finished](absl::Duration t) {
    absl::Duration sum;
    int64_t n = 0;
    for (absl::Duration d : finished) {
      if (d > t) {
        sum += d;
        ++n;
      }
    }
    return n == 0 ? absl::ZeroDuration() : sum / n - t;
  };
  absl::Duration work = left(absl::ZeroDuration()) * std::max<int64_t>(0, not_started);
  // No less than the longest single trial: one trial does not spread over several slots.
  absl::Duration longest = not_started > 0 ? left(absl::ZeroDuration()) : absl::ZeroDuration();
  for (absl::Duration d : running_for) {
    work += left(d);
    longest = std::max(longest, left(d));
  }
  return std::max(work / std::max(1, parallel), longest);
}

const Trial* ProgressTable::Best(const Study& study) {
  const Trial* best = nullptr;
  for (const Trial& t : study.trials) {
    if (t.state != TrialState::kComplete || !t.value.has_value() || std::isnan(*t.value)) continue;
    if (best == nullptr || (study.maximize ? *t.value > *best->value : *t.value < *best->value)) {
      best = &t;
    }
  }
  return best;
}

std::string ProgressTable::Header(const Study& study, const SweepProgress& p) const {
  int complete = 0, pruned = 0, failed = 0, running = 0;
  std::set<int64_t> points;  // every point taken so far
  for (const Trial& t : study.trials) {
    if (t.point >= 0) points.insert(t.point);
    switch (t.state) {
      case TrialState::kComplete:
        ++complete;
        break;
      case TrialState::kPruned:
        ++pruned;
        break;
      case TrialState::kFail:
        ++failed;
        break;
      default:
        ++running;
    }
  }
  // The plan as known now can be smaller than what the study holds (a resumed journal whose
  // torn tail lost results, a sweep file changed since): never show fewer planned points than
  // were taken or done.
  const int64_t planned = std::max<int64_t>(
      {p.planned, static_cast<int64_t>(points.size()), static_cast<int64_t>(complete + pruned)});
  std::string out =
      absl::StrFormat("sweep %s  %d/%s%d points done (%d complete, %d pruned", config_.name,
                      complete + pruned, p.planned_exact ? "" : "<=", planned, complete, pruned);
  if (failed > 0) absl::StrAppend(&out, ", ", failed, " failed attempts");
  absl::StrAppend(&out, ")  ", running, " running");
  if (const Trial* best = Best(study)) {
    absl::StrAppend(&out, absl::StrFormat("  best #%d %s=%.4f", best->number, config_.metric_name,
                                          *best->value));
  }
  absl::StrAppend(&out, "  ", Clock(p.elapsed));
  if (p.eta.has_value() && running + (p.planned - complete - pruned) > 0) {
    absl::StrAppend(&out, "  eta ", p.planned_exact ? "" : "<=", Clock(*p.eta));
  }
  return out + "\n";
}

// The trial's other parameters (beyond lr and batch_size), " name=value" each.
std::string ProgressTable::OtherParams(const Trial& t) const {
  std::string out;
  for (const ParamSpec& p : config_.params) {
    auto it = t.params.find(p.name);
    if (it != t.params.end())
      absl::StrAppend(&out, " ", p.name, "=", ParamValueText(p, it->second));
  }
  return out;
}

std::string ProgressTable::Row(const Trial& t, const std::string& where,
                               std::optional<double> gpu_util_now) const {
  const auto step = t.LastStep();
  std::string state = TrialStateName(t.state);
  if (t.state == TrialState::kRunning && !where.empty())
    state = where == "queued" ? "QUEUED" : "RUNNING";
  std::string row = absl::StrFormat(
      " %5d  %-6s  %.3e  %.3e  %5d  %-8s  %7s  %-*s", t.number, t.phase,
      t.params.count(kLrParam) ? t.params.at(kLrParam) : 0.0, t.lr_effective,
      static_cast<int>(t.params.count(kBatchParam) ? t.params.at(kBatchParam) : 0), state,
      step.has_value() ? std::to_string(*step) : "-", MetricWidth(), LastValue(t));
  if (!t.placement.empty()) absl::StrAppend(&row, "  ", t.placement);
  if (gpu_util_now.has_value()) {
    absl::StrAppend(&row, absl::StrFormat("  gpu %.0f%%", *gpu_util_now));
  } else if (t.gpu_util_mean.has_value()) {
    absl::StrAppend(&row, absl::StrFormat("  gpu %.0f%% mean", *t.gpu_util_mean));
  }
  return row + "\n";
}

std::string ProgressTable::Render(const Study& study, const SweepProgress& p, int max_rows) const {
  std::string out = Header(study, p);
  absl::StrAppend(&out, absl::StrFormat(" %5s  %-6s  %-9s  %-9s  %5s  %-8s  %7s  %-*s  %s\n",
                                        "trial", "phase", "lr", "lr_eff", "batch", "state",
                                        "samples", MetricWidth(), config_.metric_name, "on"));
  std::vector<const Trial*> rows;
  for (const Trial& t : study.trials) {
    if (t.state == TrialState::kRunning) rows.push_back(&t);
  }
  for (auto it = study.trials.rbegin();
       it != study.trials.rend() && static_cast<int>(rows.size()) < max_rows; ++it) {
    if (it->state != TrialState::kRunning) rows.push_back(&*it);
  }
  if (static_cast<int>(rows.size()) > max_rows) rows.resize(static_cast<size_t>(max_rows));
  std::sort(rows.begin(), rows.end(),
            [](const Trial* a, const Trial* b) { return a->number < b->number; });
  for (const Trial* t : rows) {
    auto w = p.where.find(t->number);
    auto g = p.gpu_util.find(t->number);
    absl::StrAppend(&out,
                    Row(*t, w == p.where.end() ? "" : w->second,
                        g == p.gpu_util.end() ? std::nullopt : std::optional<double>(g->second)));
  }
  return out;
}

std::string Placement(const std::map<std::string, std::vector<int32_t>>& slots_by_agent) {
  std::string out;
  for (const auto& [agent, unsorted] : slots_by_agent) {
    std::vector<int32_t> slots = unsorted;
    std::sort(slots.begin(), slots.end());
    absl::StrAppend(&out, out.empty() ? "" : " ", agent, ":");
    for (size_t i = 0; i < slots.size();) {
      size_t j = i;
      while (j + 1 < slots.size() && slots[j + 1] == slots[j] + 1) ++j;
      absl::StrAppend(&out, i == 0 ? "" : ",", slots[i]);
      if (j > i) absl::StrAppend(&out, j == i + 1 ? "," : "-", slots[j]);
      i = j + 1;
    }
  }
  return out;
}

std::string ProgressTable::EventLine(const Trial& t, std::optional<absl::Duration> ran) const {
  std::string out = absl::StrFormat("trial %d %s  lr=%.3e lr_eff=%.3e batch=%d%s", t.number,
                                    TrialStateName(t.state), t.params.at(kLrParam), t.lr_effective,
                                    static_cast<int>(t.params.at(kBatchParam)), OtherParams(t));
  const auto step = t.LastStep();
  if (t.state == TrialState::kComplete && t.value.has_value()) {
    absl::StrAppend(&out, absl::StrFormat("  %s=%.4f", config_.metric_name, *t.value));
  } else if (t.state == TrialState::kPruned && step.has_value()) {
    absl::StrAppend(&out, absl::StrFormat("  at %d samples (%s=%.4f)", *step, config_.metric_name,
                                          t.intermediate_values.rbegin()->second));
  }
  if (ran.has_value()) {
    absl::StrAppend(&out, absl::StrFormat("  %.1f s", absl::ToDoubleSeconds(*ran)));
  }
  absl::StrAppend(&out, GpuText(t));
  if (!t.placement.empty()) absl::StrAppend(&out, "  on ", t.placement);
  if (t.state == TrialState::kFail) absl::StrAppend(&out, "  ", t.fail_reason);
  return out + "\n";
}

std::string ProgressTable::Summary(const Study& study, const SweepProgress& p,
                                   const std::string& journal, const std::string& hpo) const {
  std::string out = "\n" + Header(study, p);
  if (const Trial* best = Best(study)) {
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "best trial #%d: %s=%.6g  lr=%.6g  batch_size=%d  lr_effective=%.6g%s  (%s phase)\n",
            best->number, config_.metric_name, *best->value, best->params.at(kLrParam),
            static_cast<int>(best->params.at(kBatchParam)), best->lr_effective, OtherParams(*best),
            best->phase));
  } else {
    absl::StrAppend(&out, "no trial completed\n");
  }
  absl::StrAppend(&out, "journal: ", journal, "  (", hpo, " status --journal ", ShellQuote(journal),
                  ")\n");
  return out;
}

}  // namespace hpo
}  // namespace tunefleet
