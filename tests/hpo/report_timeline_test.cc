// hpo/report/report_timeline.h: lanes from placements, trial times, the wall time and busy share,
// and where running and unplaced trials go.
#include "hpo/report/report_timeline.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {
namespace {

using Lanes = std::vector<std::string>;

TEST(PlacementLanesTest, ExpandsRangesAndAgents) {
  EXPECT_EQ(PlacementLanes("local:0-3"), (Lanes{"local:0", "local:1", "local:2", "local:3"}));
  EXPECT_EQ(PlacementLanes("node-a:0,1 node-b:6,7"),
            (Lanes{"node-a:0", "node-a:1", "node-b:6", "node-b:7"}));
  EXPECT_EQ(PlacementLanes("nodeA:2"), (Lanes{"nodeA:2"}));
  EXPECT_EQ(PlacementLanes(""), Lanes{});
  EXPECT_EQ(PlacementLanes("weird"), (Lanes{"weird"}));
  EXPECT_EQ(PlacementLanes("a:x-y"), (Lanes{"a:x-y"}));
}

TEST(ParseTrialTimeTest, ReadsOptunaDatetimes) {
  auto a = ParseTrialTime("2024-05-01T13:04:00.123456");
  auto b = ParseTrialTime("2024-05-01T13:05:01.123456");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(*b - *a, absl::Seconds(61));
  EXPECT_FALSE(ParseTrialTime("").has_value());
  EXPECT_FALSE(ParseTrialTime("yesterday").has_value());
}

TEST(DurationTextTest, Compact) {
  EXPECT_EQ(DurationText(absl::Milliseconds(2500)), "2.5s");
  EXPECT_EQ(DurationText(absl::Seconds(45)), "45s");
  EXPECT_EQ(DurationText(absl::Seconds(187)), "3m 07s");
  EXPECT_EQ(DurationText(absl::Seconds(3720)), "1h 02m");
}

Trial Span(int64_t n, TrialState s, const std::string& start, const std::string& end,
           const std::string& placement) {
  Trial t;
  t.number = n;
  t.state = s;
  t.datetime_start = start;
  t.datetime_complete = end;
  t.placement = placement;
  return t;
}

TEST(BuildTimelineTest, LanesSpansAndShares) {
  Study study;
  study.trials = {
      Span(0, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:01:00", "b:0-1"),
      Span(1, TrialState::kPruned, "2024-05-01T13:00:00", "2024-05-01T13:00:30", "a:10"),
      Span(2, TrialState::kRunning, "2024-05-01T13:00:30", "", "a:2"),
      Span(3, TrialState::kFail, "2024-05-01T13:00:10", "2024-05-01T13:00:20", ""),
      Span(4, TrialState::kFail, "2024-05-01T13:00:15", "2024-05-01T13:00:40", ""),
      Span(5, TrialState::kWaiting, "", "", ""),
  };
  const SweepTimeline tl = BuildTimeline(study);
  // Agent, then slot by number; overlapping unplaced trials in two lanes, last.
  EXPECT_EQ(tl.lanes, (Lanes{"a:2", "a:10", "b:0", "b:1", "unplaced", "unplaced (2)"}));
  EXPECT_EQ(tl.placed_lanes, 4);
  ASSERT_EQ(tl.spans.size(), 5u);  // the WAITING trial has no time
  EXPECT_TRUE(tl.spans[2].running);
  EXPECT_EQ(tl.spans[2].end, *ParseTrialTime("2024-05-01T13:01:00"));  // the latest time seen
  EXPECT_EQ(tl.spans[3].lanes, (Lanes{"unplaced"}));
  EXPECT_EQ(tl.spans[4].lanes, (Lanes{"unplaced (2)"}));
  EXPECT_EQ(tl.Wall(), absl::Seconds(60));
  EXPECT_EQ(tl.TrialTime(), absl::Seconds(60 + 30 + 30 + 10 + 25));
  // Busy: b:0 60 s, b:1 60 s, a:10 30 s, a:2 30 s of 4 x 60 s.
  ASSERT_TRUE(tl.BusyShare().has_value());
  EXPECT_DOUBLE_EQ(*tl.BusyShare(), 180.0 / 240.0);
  const std::string svg = TimelineSvg(study, tl, 800);
  EXPECT_NE(svg.find("<a href=\"#trial-0\">"), std::string::npos);
  EXPECT_NE(svg.find("(still running)"), std::string::npos);
}

// Trials sharing a GPU (resources.trials_per_gpu): overlapping trials on one lane take its
// shared lanes, a seat freed is taken again, and the GPU counts once in the busy share.
TEST(BuildTimelineTest, TrialsSharingAGpuTakeSharedLanes) {
  Study study;
  study.trials = {
      Span(0, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:00:40", "a:0"),
      Span(1, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:00:20", "a:0"),
      Span(2, TrialState::kPruned, "2024-05-01T13:00:10", "2024-05-01T13:00:30", "a:0"),
      Span(3, TrialState::kComplete, "2024-05-01T13:00:25", "2024-05-01T13:00:50", "a:0"),
      Span(4, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:00:10", "a:1"),
      Span(5, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:00:10", "a:0-1"),
  };
  const SweepTimeline tl = BuildTimeline(study);
  EXPECT_EQ(tl.lanes, (Lanes{"a:0", "a:0 (2)", "a:0 (3)", "a:1"}));
  EXPECT_EQ(tl.placed_lanes, 2);  // two GPUs
  EXPECT_EQ(tl.spans[0].lanes, (Lanes{"a:0"}));
  EXPECT_EQ(tl.spans[1].lanes, (Lanes{"a:0 (2)"}));
  EXPECT_EQ(tl.spans[2].lanes, (Lanes{"a:0 (3)"}));
  EXPECT_EQ(tl.spans[3].lanes, (Lanes{"a:0 (2)"}));     // trial 1's seat, free again at :20
  EXPECT_EQ(tl.spans[5].lanes, (Lanes{"a:0", "a:1"}));  // a two-GPU trial on the GPUs' lanes
  // a:0 busy 0..50 s, a:1 0..10 s, of 2 x 50 s.
  EXPECT_DOUBLE_EQ(*tl.BusyShare(), 60.0 / 100.0);
}

// A trial that waited at its agent (for GPU memory) is drawn from when its ranks started
// (user attr "ranks_started"), not from when hpo submitted it.
TEST(BuildTimelineTest, ATrialThatWaitedStartsWithItsRanks) {
  Study study;
  study.trials = {
      Span(0, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:00:40", "a:0"),
      Span(1, TrialState::kComplete, "2024-05-01T13:00:00", "2024-05-01T13:01:00", "a:0"),
  };
  study.trials[0].ranks_started = "2024-05-01T13:00:01";
  study.trials[1].ranks_started = "2024-05-01T13:00:40";  // waited for trial 0's memory
  const SweepTimeline tl = BuildTimeline(study);
  EXPECT_EQ(tl.spans[1].start, *ParseTrialTime("2024-05-01T13:00:40"));
  EXPECT_EQ(tl.spans[1].lanes, (Lanes{"a:0"}));  // trial 0's seat, free again: no shared lane
  EXPECT_EQ(tl.lanes, (Lanes{"a:0"}));
  EXPECT_EQ(tl.TrialTime(), absl::Seconds(39 + 20));
  EXPECT_NE(TimelineSvg(study, tl, 800).find("waited 40s at its agent"), std::string::npos);
}

TEST(BuildTimelineTest, NothingStarted) {
  Study study;
  const SweepTimeline tl = BuildTimeline(study);
  EXPECT_TRUE(tl.spans.empty());
  EXPECT_EQ(tl.Wall(), absl::ZeroDuration());
  EXPECT_FALSE(tl.BusyShare().has_value());
  EXPECT_NE(TimelineSvg(study, tl, 800).find("No trial has started"), std::string::npos);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
