#include "bench/sweep_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace bench {

absl::StatusOr<std::optional<Policy::Started>> TunefleetPolicy::Start() {
  ASSIGN_OR_RETURN(std::optional<int64_t> number, engine_.StartTrial());
  if (!number.has_value()) return std::optional<Started>();
  Started s;
  s.trial = *number;
  s.params = engine_.study().trials[static_cast<size_t>(*number)].params;
  return std::optional<Started>(std::move(s));
}

absl::StatusOr<bool> TunefleetPolicy::Report(int64_t trial, int64_t samples, double value,
                                             bool final) {
  return engine_.Report(trial, samples, value, final);
}

absl::Status TunefleetPolicy::End(int64_t trial, bool completed) {
  return engine_
      .EndTrial(trial, completed ? hpo::RunEnd::kCompleted : hpo::RunEnd::kStopped, "", "", false)
      .status();
}

std::vector<int64_t> EvaluationPoints(int64_t total, int64_t epoch, int64_t evals_per_epoch) {
  std::vector<int64_t> out;
  for (int64_t j = 1;; ++j) {
    const int64_t key = std::llround(static_cast<double>(j) * static_cast<double>(epoch) /
                                     static_cast<double>(evals_per_epoch));
    if (key >= total) break;
    if (out.empty() || key > out.back()) out.push_back(key);
  }
  out.push_back(total);
  return out;
}

std::optional<int64_t> ReplayTrace::ComputeToWithin(double target, double eps,
                                                    bool maximize) const {
  for (const Completion& c : completions) {
    if (maximize ? c.best >= target - eps : c.best <= target + eps) return c.compute;
  }
  return std::nullopt;
}

std::optional<double> ReplayTrace::BestAt(int64_t compute) const {
  std::optional<double> best;
  for (const Completion& c : completions) {
    if (c.compute > compute) break;
    best = c.best;
  }
  return best;
}

absl::StatusOr<ReplayTrace> Replay(const SearchTable& table, Policy& policy,
                                   const ReplayOptions& o) {
  struct Active {
    int64_t start = 0;  // simulated time it started
    std::vector<int64_t> keys;
    std::vector<double> values;
    size_t next = 0;  // the next report
  };
  std::map<int64_t, Active> active;  // by trial number
  ReplayTrace trace;
  int64_t now = 0;
  int64_t finished_compute = 0;  // samples of the trials that ended
  const auto compute_at = [&](int64_t t) {
    int64_t c = finished_compute;
    for (const auto& [number, a] : active) c += t - a.start;
    return c;
  };
  std::optional<double> best;
  const int64_t epoch = table.max_total();
  while (true) {
    const bool budget_left = o.compute_limit <= 0 || compute_at(now) < o.compute_limit;
    while (budget_left && static_cast<int64_t>(active.size()) < o.max_concurrent_trials) {
      ASSIGN_OR_RETURN(std::optional<Policy::Started> s, policy.Start());
      if (!s.has_value()) break;
      Active a;
      a.start = now;
      a.keys = EvaluationPoints(table.Total(s->params), epoch, o.evals_per_epoch);
      a.values = table.Answer(s->params, a.keys);
      active[s->trial] = std::move(a);
      ++trace.trials;
    }
    if (active.empty()) break;  // exhausted, or out of budget
    // The next report: the earliest, ties in trial order.
    int64_t number = -1, when = std::numeric_limits<int64_t>::max();
    for (const auto& [n, a] : active) {
      const int64_t t = a.start + a.keys[a.next];
      if (t < when) {
        when = t;
        number = n;
      }
    }
    if (o.compute_limit > 0 && compute_at(when) > o.compute_limit) {
      // The budget runs out before this report: the replay ends where it is spent.
      trace.compute = o.compute_limit;
      return trace;
    }
    now = when;
    Active& a = active[number];
    const size_t i = a.next++;
    const bool final = a.next == a.keys.size();
    const int64_t key = a.keys[i];
    const double v = a.values[i];
    ASSIGN_OR_RETURN(const bool stop, policy.Report(number, key, v, final));
    if (final || stop) {
      finished_compute += key;
      active.erase(number);
      RETURN_IF_ERROR(policy.End(number, final));
      if (final) {
        if (!best.has_value() || (table.maximize() ? v > *best : v < *best)) best = v;
        trace.completions.push_back({compute_at(now), *best});
      } else {
        ++trace.pruned;
      }
    }
    if (o.compute_limit > 0 && compute_at(now) >= o.compute_limit) break;
  }
  trace.compute = compute_at(now);
  return trace;
}

}  // namespace bench
}  // namespace tunefleet
