#include "bench/search_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "hpo/journal/journal_replay.h"

namespace tunefleet {
namespace bench {
namespace {

constexpr char kLr[] = "lr";
constexpr char kBatch[] = "batch_size";

// The distance of two values of parameter `name`: log scale for lr and batch_size.
double Distance(const std::string& name, double a, double b) {
  if ((name == kBatch || name == kLr) && a > 0 && b > 0) return std::abs(std::log(a / b));
  return std::abs(a - b);
}

}  // namespace

double CurveAt(const SearchTable::Point& c, int64_t samples) {
  if (c.keys.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (samples <= c.keys.front()) return c.values.front();
  if (samples >= c.keys.back()) return c.values.back();
  const auto hi = std::lower_bound(c.keys.begin(), c.keys.end(), samples);
  const size_t j = static_cast<size_t>(hi - c.keys.begin());
  if (c.keys[j] == samples) return c.values[j];
  const double f =
      static_cast<double>(samples - c.keys[j - 1]) / static_cast<double>(c.keys[j] - c.keys[j - 1]);
  return c.values[j - 1] + f * (c.values[j] - c.values[j - 1]);
}

absl::StatusOr<SearchTable> SearchTable::Load(const std::string& path, const TableOptions& o) {
  ASSIGN_OR_RETURN(hpo::JournalContents contents, hpo::ReadJournal(path));
  SearchTable table;
  table.study_name_ = contents.study_name;
  table.maximize_ = contents.maximize;
  auto resource = contents.study_user_attrs.find("resource");
  table.keyed_by_steps_ =
      resource == contents.study_user_attrs.end() || resource->second != "\"samples\"";
  if (table.keyed_by_steps_ && o.epoch_samples <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": its steps are optimizer steps (a journal from before the samples axis): give "
        "--epoch_samples, the samples of one epoch"));
  }
  std::set<Params> seen;
  for (const hpo::Trial& t : contents.study.trials) {
    if (t.state == hpo::TrialState::kPruned) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": trial ", t.number,
                       " was pruned: a table comes from a full grid run without "
                       "pruning (search.method: grid, early_terminate: {type: none})"));
    }
    if (t.state != hpo::TrialState::kComplete || !t.value.has_value()) continue;
    if (!t.params.count(kLr) || !t.params.count(kBatch)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": trial ", t.number, " has no lr or batch_size"));
    }
    if (!seen.insert(t.params).second) continue;  // a point run twice: the first counts
    Point p;
    p.params = t.params;
    for (const auto& [step, value] : t.intermediate_values) {
      int64_t key = step;
      if (table.keyed_by_steps_) {
        key = std::min(o.epoch_samples,
                       step * static_cast<int64_t>(t.params.at(kBatch)) * o.ranks * o.grad_accum);
      }
      if (!std::isfinite(value)) continue;
      if (!p.keys.empty() && key <= p.keys.back()) continue;
      p.keys.push_back(key);
      p.values.push_back(value);
    }
    if (table.keyed_by_steps_) {
      // The final value, at one epoch (the old journals kept it out of the intermediate ones).
      while (!p.keys.empty() && p.keys.back() >= o.epoch_samples) {
        p.keys.pop_back();
        p.values.pop_back();
      }
      p.keys.push_back(o.epoch_samples);
      p.values.push_back(*t.value);
    } else if (p.keys.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": trial ", t.number,
                       " has no intermediate value: not a journal of the samples "
                       "axis, whose final evaluation is one"));
    } else {
      p.values.back() = *t.value;  // the last key is the final evaluation
    }
    table.compute_ += p.keys.back();
    table.max_total_ = std::max(table.max_total_, p.keys.back());
    const double v = *t.value;
    if (table.points_.empty() || (table.maximize_ ? v > table.best_ : v < table.best_)) {
      table.best_ = v;
    }
    for (const auto& [name, value] : p.params) table.axes_[name].push_back(value);
    table.points_.push_back(std::move(p));
  }
  if (table.points_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": no COMPLETE trial: not a table"));
  }
  for (auto& [name, values] : table.axes_) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
  }
  return table;
}

SearchTable::Bracket SearchTable::Around(const Params& params) const {
  // The nearest table value of every parameter but lr.
  Params want;
  for (const auto& [name, values] : axes_) {
    if (name == kLr) continue;
    auto given = params.find(name);
    if (given == params.end()) continue;
    double best = values.front();
    for (double v : values) {
      if (Distance(name, v, given->second) < Distance(name, best, given->second)) best = v;
    }
    want[name] = best;
  }
  std::vector<const Point*> line;  // the points that match, by lr
  for (const Point& p : points_) {
    bool match = true;
    for (const auto& [name, value] : want) {
      auto it = p.params.find(name);
      match = match && it != p.params.end() && it->second == value;
    }
    if (match) line.push_back(&p);
  }
  if (line.empty()) line.push_back(&points_.front());  // a ragged table: any point
  std::sort(line.begin(), line.end(),
            [](const Point* a, const Point* b) { return a->params.at(kLr) < b->params.at(kLr); });
  const double lr = params.count(kLr) ? params.at(kLr) : line.front()->params.at(kLr);
  Bracket b;
  if (lr <= line.front()->params.at(kLr)) {
    b.low = b.high = line.front();
    return b;
  }
  if (lr >= line.back()->params.at(kLr)) {
    b.low = b.high = line.back();
    return b;
  }
  for (size_t i = 1; i < line.size(); ++i) {
    const double hi = line[i]->params.at(kLr);
    if (lr > hi) continue;
    const double lo = line[i - 1]->params.at(kLr);
    b.low = line[i - 1];
    b.high = line[i];
    b.weight = std::log(lr / lo) / std::log(hi / lo);
    break;
  }
  return b;
}

std::vector<double> SearchTable::Answer(const Params& params,
                                        const std::vector<int64_t>& keys) const {
  const Bracket b = Around(params);
  std::vector<double> out;
  for (int64_t key : keys) {
    const double lo = CurveAt(*b.low, key);
    out.push_back(b.weight == 0 ? lo : (1 - b.weight) * lo + b.weight * CurveAt(*b.high, key));
  }
  return out;
}

int64_t SearchTable::Total(const Params& params) const {
  const Bracket b = Around(params);
  return b.weight < 0.5 ? b.low->keys.back() : b.high->keys.back();
}

}  // namespace bench
}  // namespace tunefleet
