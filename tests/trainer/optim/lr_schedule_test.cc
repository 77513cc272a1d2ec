// LrSchedule (trainer/optim/lr_schedule.h) against hand-computed values of transformers'
// get_linear_schedule_with_warmup and get_constant_schedule_with_warmup (LambdaLR multipliers
// times lr) with W = ceil(warmup_ratio * T) warm-up steps (TrainingArguments.get_warmup_steps).
#include "trainer/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

// transformers.optimization, transcribed: the multiplier of step s.
double LinearLambda(int64_t s, int64_t warmup, int64_t total) {
  if (s < warmup) return static_cast<double>(s) / static_cast<double>(std::max<int64_t>(1, warmup));
  return std::max(0.0, static_cast<double>(total - s) /
                           static_cast<double>(std::max<int64_t>(1, total - warmup)));
}

double ConstantLambda(int64_t s, int64_t warmup) {
  if (s < warmup) return static_cast<double>(s) / std::max(1.0, static_cast<double>(warmup));
  return 1.0;
}

// (step, expected learning rate) pairs, hand-computed.
using Points = std::vector<std::pair<int64_t, double>>;

void ExpectAt(const LrSchedule& s, const Points& points) {
  for (const auto& [step, lr] : points) EXPECT_DOUBLE_EQ(s.At(step), lr) << "step " << step;
}

TEST(LrScheduleTest, LinearHandComputed) {
  const LrSchedule s("linear", 1.0, 0.1, 100);
  EXPECT_EQ(s.warmup_steps(), 10);
  EXPECT_EQ(s.total_steps(), 100);
  ExpectAt(s, {{0, 0.0},
               {1, 0.1},
               {5, 0.5},
               {9, 0.9},
               {10, 1.0},
               {11, 89.0 / 90.0},
               {55, 0.5},
               {99, 1.0 / 90.0},
               {100, 0.0},
               {150, 0.0}});  // max(0, ...): never negative
}

TEST(LrScheduleTest, LinearScalesWithLr) {
  ExpectAt(LrSchedule("linear", 2e-5, 0.1, 100),
           {{0, 0.0}, {5, 1e-5}, {10, 2e-5}, {55, 1e-5}, {100, 0.0}});
}

TEST(LrScheduleTest, WarmupRoundsUp) {
  // 0.1 * 95 = 9.5 -> 10 warm-up steps; decay over the remaining 85.
  const LrSchedule s("linear", 1.0, 0.1, 95);
  EXPECT_EQ(s.warmup_steps(), 10);
  ExpectAt(s, {{5, 0.5}, {9, 0.9}, {10, 1.0}, {50, 45.0 / 85.0}, {95, 0.0}});
  // 0.25 * 10 = 2.5 -> 3; 0.01 * 50 = 0.5 -> 1.
  EXPECT_EQ(LrSchedule("linear", 1.0, 0.25, 10).warmup_steps(), 3);
  EXPECT_EQ(LrSchedule("constant", 1.0, 0.01, 50).warmup_steps(), 1);
}

TEST(LrScheduleTest, LinearWithoutWarmupStartsAtLr) {
  const LrSchedule s("linear", 1.0, 0.0, 100);
  EXPECT_EQ(s.warmup_steps(), 0);
  ExpectAt(s, {{0, 1.0}, {50, 0.5}, {100, 0.0}});
}

TEST(LrScheduleTest, ConstantWithWarmup) {
  const LrSchedule s("constant", 3.0, 0.1, 100);
  EXPECT_EQ(s.warmup_steps(), 10);
  ExpectAt(s, {{0, 0.0}, {5, 1.5}, {10, 3.0}, {55, 3.0}, {100, 3.0}, {1000, 3.0}});
}

TEST(LrScheduleTest, ConstantWithoutWarmupGivesLrAtStepZero) {
  const LrSchedule s("constant", 0.5, 0.0, 100);
  EXPECT_EQ(s.warmup_steps(), 0);
  ExpectAt(s, {{0, 0.5}, {1, 0.5}, {100, 0.5}});
}

TEST(LrScheduleTest, UnknownKindIsConstant) {
  ExpectAt(LrSchedule("cosine", 1.0, 0.1, 100), {{5, 0.5}, {55, 1.0}, {100, 1.0}});
}

// Every step of a few schedules against the transcribed transformers lambdas.
TEST(LrScheduleTest, MatchesTransformersLambdasAtEveryStep) {
  struct Case {
    double ratio;
    int64_t total, warmup;  // warmup: ceil(ratio * total), worked out by hand
  };
  for (const Case& c : {Case{0.1, 100, 10}, Case{0.1, 95, 10}, Case{0.0, 40, 0}, Case{0.5, 7, 4},
                        Case{1.0, 20, 20}}) {
    const LrSchedule linear("linear", 0.7, c.ratio, c.total);
    const LrSchedule constant("constant", 0.7, c.ratio, c.total);
    ASSERT_EQ(linear.warmup_steps(), c.warmup) << c.ratio << " " << c.total;
    ASSERT_EQ(constant.warmup_steps(), c.warmup) << c.ratio << " " << c.total;
    for (int64_t s = 0; s <= c.total + 2; ++s) {
      EXPECT_NEAR(linear.At(s), 0.7 * LinearLambda(s, c.warmup, c.total), 1e-15)
          << "linear, ratio " << c.ratio << ", total " << c.total << ", step " << s;
      EXPECT_NEAR(constant.At(s), 0.7 * ConstantLambda(s, c.warmup), 1e-15)
          << "constant, ratio " << c.ratio << ", total " << c.total << ", step " << s;
    }
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
