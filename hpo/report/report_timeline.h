// The time side of `hpo report` (hpo/report/report.h): when each trial ran, on which lanes (an
// agent's slot or GPU, from the trial's placement), the sweep's wall time and busy share, and the
// timeline chart (one lane per agent:slot, a bar per trial coloured by its state).
//
// Guarantees: trials without a readable datetime_start (WAITING ones) are left out; a trial
// without datetime_complete (RUNNING) ends at the latest time the journal shows; a trial
// without placement goes to an "unplaced" lane (several when they overlap in time); trials that
// overlap in time on one GPU (resources.trials_per_gpu) take its shared lanes, "local:0 (2)",
// "local:0 (3)", under its own; a multi-GPU placement occupies every lane it names. Journal text
// in the chart is escaped (hpo/report/svg_chart.h).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_HPO_REPORT_REPORT_TIMELINE_H_
#define TUNEFLEET_HPO_REPORT_REPORT_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {

// The colour the report gives a trial state (bars, badges).
const char* StateColor(TrialState state);

// Optuna's datetime ("2024-05-01T13:04:00.123456", local time without zone), read as UTC (the
// report only subtracts them); nullopt when unreadable or empty.
std::optional<absl::Time> ParseTrialTime(const std::string& datetime);

// The lanes of a placement (hpo/report/progress_table.h's Placement): "local:0-3" -> local:0,
// local:1, local:2, local:3; "a:0,1 b:6" -> a:0, a:1, b:6; a token without ":SLOTS" is one lane as
// it is; "" -> none.
std::vector<std::string> PlacementLanes(const std::string& placement);

// How long `d` is, compactly: "2.5s" (under 10 s), "45s", "3m 07s", "1h 02m".
std::string DurationText(absl::Duration d);

struct TrialSpan {
  int64_t number = 0;
  absl::Time start;
  absl::Time end;  // datetime_complete, or the latest time seen while RUNNING
  bool running = false;
  std::vector<std::string> lanes;  // from placement; "unplaced" or "unplaced (2)" without
};

struct SweepTimeline {
  absl::Time first_start = absl::InfiniteFuture();  // InfiniteFuture: no trial has started
  absl::Time last_seen = absl::InfinitePast();      // the latest start or end in the journal
  std::vector<TrialSpan> spans;                     // by trial number
  std::vector<std::string> lanes;                   // agent, slot, shared; unplaced last
  int placed_lanes = 0;  // GPUs (slots) named by some placement: a GPU's shared lanes count once

  absl::Duration Wall() const;       // first start to the latest time seen
  absl::Duration TrialTime() const;  // the spans' sum
  // The placed GPUs' busy time (any of their lanes busy) over placed_lanes x Wall(); nullopt
  // without placed lanes.
  std::optional<double> BusyShare() const;
};

SweepTimeline BuildTimeline(const Study& study);

// The timeline chart (SVG and legend), `width` px wide; each bar links to "#trial-N".
std::string TimelineSvg(const Study& study, const SweepTimeline& timeline, int width);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_REPORT_TIMELINE_H_
