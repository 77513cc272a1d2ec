#include "hpo/report/report_timeline.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "hpo/report/svg_chart.h"
#include "hpo/search_space.h"

namespace tunefleet {
namespace hpo {
namespace {

constexpr char kUnplaced[] = "unplaced";

// A shared lane "local:0 (2)": the second trial at once on local:0's GPU; its GPU's lane, and
// the seat (0 for the lane itself).
std::pair<std::string, int64_t> SplitSeat(const std::string& lane) {
  int64_t seat = 0;
  const size_t open = lane.rfind(" (");
  if (open != std::string::npos && absl::EndsWith(lane, ")") &&
      absl::SimpleAtoi(lane.substr(open + 2, lane.size() - open - 3), &seat) && seat > 1) {
    return {lane.substr(0, open), seat - 1};
  }
  return {lane, 0};
}

// Lane order: agent name, then slot number (a lane without a number after its agent's), then
// the shared lanes of that slot.
std::tuple<std::string, int64_t, std::string, int64_t> LaneKey(const std::string& name) {
  const auto [lane, seat] = SplitSeat(name);
  const size_t colon = lane.rfind(':');
  int64_t slot = 0;
  if (colon != std::string::npos && absl::SimpleAtoi(lane.substr(colon + 1), &slot)) {
    return {lane.substr(0, colon), slot, "", seat};
  }
  return {lane, INT64_MAX, lane, seat};
}

// The first of `ends`' seats free at `start` (a new one when none is), which then holds the bar
// until `end`.
size_t TakeSeat(std::vector<absl::Time>& ends, absl::Time start, absl::Time end) {
  size_t seat = 0;
  while (seat < ends.size() && ends[seat] > start) ++seat;
  if (seat == ends.size()) ends.push_back(end);
  ends[seat] = end;
  return seat;
}

std::string SeatLane(const std::string& lane, size_t seat) {
  return seat == 0 ? lane : absl::StrCat(lane, " (", seat + 1, ")");
}

// "h:mm:ss" or "m:ss" of `seconds` since the first start, for the time axis.
std::string ClockText(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

// Time-axis ticks at a round step (1 s ... 1 day) giving about 8 of them up to `span` s.
std::vector<double> TimeTicks(double span) {
  double step = 86400;
  for (double s : {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
                   43200, 86400}) {
    if (span / s <= 8) {
      step = s;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = 0; t <= span + 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

}  // namespace

const char* StateColor(TrialState state) {
  switch (state) {
    case TrialState::kComplete:
      return "#4c9a4c";
    case TrialState::kPruned:
      return "#e8a33d";
    case TrialState::kFail:
      return "#d64545";
    case TrialState::kRunning:
      return "#4a7fc1";
    case TrialState::kWaiting:
      return "#a0a0a0";
  }
  return "#a0a0a0";
}

std::optional<absl::Time> ParseTrialTime(const std::string& datetime) {
  if (datetime.empty()) return std::nullopt;
  absl::Time t;
  std::string err;
  if (!absl::ParseTime("%Y-%m-%dT%H:%M:%E*S", datetime, absl::UTCTimeZone(), &t, &err)) {
    return std::nullopt;
  }
  return t;
}

std::vector<std::string> PlacementLanes(const std::string& placement) {
  std::vector<std::string> lanes;
  for (absl::string_view token : absl::StrSplit(placement, ' ', absl::SkipWhitespace())) {
    const size_t colon = token.rfind(':');
    if (colon == absl::string_view::npos || colon == 0) {
      lanes.emplace_back(token);
      continue;
    }
    const std::string agent(token.substr(0, colon));
    std::vector<std::string> parsed;
    bool ok = true;
    for (absl::string_view part : absl::StrSplit(token.substr(colon + 1), ',')) {
      std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(part, '-');
      int64_t first = 0, last = 0;
      if (!absl::SimpleAtoi(range.first, &first)) {
        ok = false;
        break;
      }
      last = first;
      if (!range.second.empty() && !absl::SimpleAtoi(range.second, &last)) {
        ok = false;
        break;
      }
      if (last < first || last - first > 1024) {
        ok = false;
        break;
      }
      for (int64_t s = first; s <= last; ++s) parsed.push_back(absl::StrCat(agent, ":", s));
    }
    if (!ok) {
      lanes.emplace_back(token);
    } else {
      lanes.insert(lanes.end(), parsed.begin(), parsed.end());
    }
  }
  return lanes;
}

std::string DurationText(absl::Duration d) {
  if (d < absl::Seconds(9.95)) {
    return absl::StrFormat("%.1fs", std::max(0.0, absl::ToDoubleSeconds(d)));
  }
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(d + absl::Milliseconds(500)));
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm %02ds", s / 60, s % 60);
  return absl::StrFormat("%dh %02dm", s / 3600, (s / 60) % 60);
}

absl::Duration SweepTimeline::Wall() const {
  if (spans.empty()) return absl::ZeroDuration();
  return last_seen - first_start;
}

absl::Duration SweepTimeline::TrialTime() const {
  absl::Duration sum;
  for (const TrialSpan& s : spans) sum += s.end - s.start;
  return sum;
}

std::optional<double> SweepTimeline::BusyShare() const {
  const absl::Duration wall = Wall();
  if (placed_lanes == 0 || wall <= absl::ZeroDuration()) return std::nullopt;
  // Per lane, the union of its spans (overlaps counted once).
  std::map<std::string, std::vector<std::pair<absl::Time, absl::Time>>> by_lane;
  for (const TrialSpan& s : spans) {
    for (const std::string& lane : s.lanes) {
      if (lane.rfind(kUnplaced, 0) != 0) by_lane[SplitSeat(lane).first].push_back({s.start, s.end});
    }
  }
  absl::Duration busy;
  for (auto& [lane, intervals] : by_lane) {
    std::sort(intervals.begin(), intervals.end());
    absl::Time covered = absl::InfinitePast();
    for (const auto& [start, end] : intervals) {
      const absl::Time from = std::max(start, covered);
      if (end > from) busy += end - from;
      covered = std::max(covered, end);
    }
  }
  return absl::FDivDuration(busy, wall * placed_lanes);
}

SweepTimeline BuildTimeline(const Study& study) {
  SweepTimeline tl;
  for (const Trial& t : study.trials) {
    for (const std::string* when : {&t.datetime_start, &t.datetime_complete}) {
      if (std::optional<absl::Time> time = ParseTrialTime(*when)) {
        tl.first_start = std::min(tl.first_start, *time);
        tl.last_seen = std::max(tl.last_seen, *time);
      }
    }
  }
  std::set<std::string> placed, gpus;
  std::vector<absl::Time> unplaced_ends;  // per "unplaced" lane, when its last bar ends
  // Per one-GPU lane, when each of its seats' last bar ends: trials sharing a GPU
  // (resources.trials_per_gpu) take shared lanes "local:0 (2)", ...
  std::map<std::string, std::vector<absl::Time>> seat_ends;
  for (const Trial& t : study.trials) {
    std::optional<absl::Time> start = ParseTrialTime(t.datetime_start);
    if (!start.has_value()) continue;
    // Its bar starts when its ranks did: a trial may have waited at its agent (GPU memory).
    if (std::optional<absl::Time> ranks = ParseTrialTime(t.ranks_started)) {
      start = std::max(*start, *ranks);
    }
    TrialSpan span;
    span.number = t.number;
    span.start = *start;
    std::optional<absl::Time> end = ParseTrialTime(t.datetime_complete);
    span.running = !end.has_value();
    span.end = std::max(*start, end.value_or(tl.last_seen));
    span.lanes = PlacementLanes(t.placement);
    gpus.insert(span.lanes.begin(), span.lanes.end());
    // Trial numbers come in start order, near enough: the first free seat.
    if (span.lanes.size() == 1) {
      span.lanes[0] =
          SeatLane(span.lanes[0], TakeSeat(seat_ends[span.lanes[0]], span.start, span.end));
    }
    placed.insert(span.lanes.begin(), span.lanes.end());
    if (span.lanes.empty()) {
      span.lanes.push_back(SeatLane(kUnplaced, TakeSeat(unplaced_ends, span.start, span.end)));
    }
    tl.spans.push_back(std::move(span));
  }
  tl.lanes.assign(placed.begin(), placed.end());
  std::sort(tl.lanes.begin(), tl.lanes.end(),
            [](const std::string& a, const std::string& b) { return LaneKey(a) < LaneKey(b); });
  tl.placed_lanes = static_cast<int>(gpus.size());
  for (size_t i = 0; i < unplaced_ends.size(); ++i) tl.lanes.push_back(SeatLane(kUnplaced, i));
  return tl;
}

std::string TimelineSvg(const Study& study, const SweepTimeline& timeline, int width) {
  if (timeline.spans.empty()) return "<p class=\"none\">No trial has started yet.</p>\n";
  std::map<std::string, double> lane_index;
  size_t widest = 4;
  for (size_t i = 0; i < timeline.lanes.size(); ++i) {
    lane_index[timeline.lanes[i]] = static_cast<double>(i);
    widest = std::max(widest, timeline.lanes[i].size());
  }
  const double span_s = std::max(1.0, absl::ToDoubleSeconds(timeline.Wall()));
  Axis x{AxisScale::kLinear, 0, span_s, "time since the first trial started (h:mm:ss / m:ss)"};
  x.ticks = TimeTicks(span_s);
  x.format = ClockText;
  Axis y{AxisScale::kCategory, 0, 0, ""};
  y.categories = timeline.lanes;
  const int height = 14 + 44 + 24 * static_cast<int>(timeline.lanes.size());
  SvgChart chart(width, height, x, y, static_cast<int>(7 * widest) + 16);
  for (const TrialSpan& s : timeline.spans) {
    const Trial& t = study.trials[static_cast<size_t>(s.number)];
    std::string title = absl::StrCat("trial ", t.number, ": ", TrialStateName(t.state),
                                     s.running ? " (still running)" : "", "\n", t.datetime_start,
                                     " .. ", s.running ? "now" : t.datetime_complete, " (",
                                     DurationText(s.end - s.start), ")");
    if (auto lr = t.params.find(kLrParam); lr != t.params.end()) {
      absl::StrAppend(&title, "\nlr ", ShortNumber(lr->second));
    }
    if (auto b = t.params.find(kBatchParam); b != t.params.end()) {
      absl::StrAppend(&title, "  batch_size ", ShortNumber(b->second));
    }
    if (!t.placement.empty()) absl::StrAppend(&title, "\non ", t.placement);
    if (std::optional<absl::Time> submitted = ParseTrialTime(t.datetime_start);
        submitted.has_value() && s.start > *submitted) {
      absl::StrAppend(&title, "\nwaited ", DurationText(s.start - *submitted),
                      " at its agent before its ranks started");
    }
    if (!t.worker.empty()) absl::StrAppend(&title, "\nworker ", t.worker);
    if (!t.fail_reason.empty()) absl::StrAppend(&title, "\n", t.fail_reason);
    const double x0 = absl::ToDoubleSeconds(s.start - timeline.first_start);
    const double x1 = absl::ToDoubleSeconds(s.end - timeline.first_start);
    for (const std::string& lane : s.lanes) {
      chart.Bar(x0, x1, lane_index[lane], 0.72, StateColor(t.state), title,
                absl::StrCat("#", t.number), absl::StrCat("#trial-", t.number));
    }
  }
  std::set<TrialState> shown;
  for (const TrialSpan& s : timeline.spans) {
    shown.insert(study.trials[static_cast<size_t>(s.number)].state);
  }
  for (TrialState state :
       {TrialState::kComplete, TrialState::kPruned, TrialState::kFail, TrialState::kRunning}) {
    if (shown.count(state)) chart.Legend(TrialStateName(state), Marker::kBlock, StateColor(state));
  }
  return chart.Render();
}

}  // namespace hpo
}  // namespace tunefleet
