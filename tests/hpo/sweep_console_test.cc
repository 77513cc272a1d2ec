// What hpo prints as a trial ends (hpo/sweep_console.h TrialEndLines): on a pipe every end as a
// plain line with how long it ran; on a terminal, where the live table shows the others,
// failures alone; a failure's last stderr line and why it is not tried again.
#include "hpo/sweep_console.h"

#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/report/progress_table.h"
#include "hpo/sweep_engine.h"
#include "hpo/trial.h"

namespace tunefleet {
namespace hpo {
namespace {

class TrialEndLinesTest : public ::testing::Test {
 protected:
  TrialEndLinesTest() : table_(Config()) {}
  static SweepConfig Config() {
    SweepConfig c;
    c.metric_name = "m";
    c.max_failures_per_trial = 2;
    return c;
  }
  static Trial Ended(TrialState state) {
    Trial t;
    t.number = 3;
    t.state = state;
    t.params = {{"lr", 2e-5}, {"batch_size", 32}};
    t.lr_effective = 2e-5;
    t.placement = "local:0";
    return t;
  }
  const SweepConfig config_ = Config();
  ProgressTable table_;
};

TEST_F(TrialEndLinesTest, OnAPipeEveryEndIsALineWithHowLongItRan) {
  Trial t = Ended(TrialState::kComplete);
  t.value = 0.8123;
  EXPECT_EQ(TrialEndLines(table_, config_, t, SweepEngine::Ended{}, absl::Seconds(41),
                          /*live=*/false),
            "trial 3 COMPLETE  lr=2.000e-05 lr_eff=2.000e-05 batch=32  m=0.8123  41.0 s  on "
            "local:0\n");
  // On a terminal the table shows it.
  EXPECT_EQ(TrialEndLines(table_, config_, t, SweepEngine::Ended{}, absl::Seconds(41), true), "");
}

TEST_F(TrialEndLinesTest, AFailureSaysItsStderrAndWhyItIsNotTriedAgain) {
  Trial t = Ended(TrialState::kFail);
  t.fail_reason = "exit code 1";
  t.stderr_tail = "loading\nValueError: bad\n";
  SweepEngine::Ended gave_up;
  gave_up.gave_up = true;
  const std::string line =
      "trial 3 FAIL  lr=2.000e-05 lr_eff=2.000e-05 batch=32  on local:0  exit code 1\n";
  for (bool live : {false, true}) {  // a failure prints on a terminal too
    EXPECT_EQ(TrialEndLines(table_, config_, t, gave_up, std::nullopt, live),
              line +
                  "  last stderr: ValueError: bad\n"
                  "  giving up on this point after 3 failed attempt(s)\n");
  }
  SweepEngine::Ended refused;
  refused.refused = true;
  EXPECT_EQ(TrialEndLines(table_, config_, t, refused, std::nullopt, false),
            line +
                "  last stderr: ValueError: bad\n"
                "  not retried: the same trial would fail the same way (fix it, then --resume "
                "runs the point again)\n");
}

TEST(SweepConsoleTest, NotLiveLinesGoOutAsTheyAre) {
  std::ostringstream out;
  int renders = 0;
  SweepConsole console(/*live=*/false, &out, [&](int) {
    ++renders;
    return std::string("table\n");
  });
  console.Print("trial 0 COMPLETE\n");
  console.Show(/*force=*/true);
  EXPECT_EQ(out.str(), "trial 0 COMPLETE\n");
  EXPECT_EQ(renders, 0);  // no table, no redraws
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
