// LossScaler (trainer/optim/loss_scaler.h) against torch.cuda.amp.GradScaler's update policy
// (_amp_update_scale_): starts at 2^16; an inf/NaN step multiplies the scale by backoff_factor,
// resets the good-step counter and counts as skipped; growth_interval consecutive good steps
// multiply it by growth_factor. Expected scales are worked out by hand.
#include "trainer/optim/loss_scaler.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

LossScaler::Options Interval(int64_t growth_interval) {
  LossScaler::Options options;
  options.growth_interval = growth_interval;
  return options;
}

TEST(LossScalerTest, GradScalerDefaults) {
  const LossScaler::Options options;
  EXPECT_EQ(options.init_scale, 65536.0);
  EXPECT_EQ(options.growth_factor, 2.0);
  EXPECT_EQ(options.backoff_factor, 0.5);
  EXPECT_EQ(options.growth_interval, 2000);
  const LossScaler scaler;
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.skipped_steps(), 0);
  EXPECT_EQ(scaler.good_steps(), 0);
}

TEST(LossScalerTest, HalvesOnInf) {
  LossScaler scaler;
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  scaler.Update(true);
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 8192.0);
  EXPECT_EQ(scaler.skipped_steps(), 3);
  EXPECT_EQ(scaler.good_steps(), 0);
}

TEST(LossScalerTest, DoublesAfterGrowthIntervalGoodSteps) {
  LossScaler scaler(Interval(3));
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.good_steps(), 1);
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.good_steps(), 2);
  scaler.Update(false);  // 3rd consecutive good step
  EXPECT_EQ(scaler.scale(), 131072.0);
  EXPECT_EQ(scaler.good_steps(), 0);
  for (int i = 0; i < 2; ++i) scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 131072.0);
  scaler.Update(false);  // 6th
  EXPECT_EQ(scaler.scale(), 262144.0);
  EXPECT_EQ(scaler.skipped_steps(), 0);
}

TEST(LossScalerTest, DefaultIntervalIs2000) {
  LossScaler scaler;
  for (int i = 0; i < 1999; ++i) scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.good_steps(), 1999);
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 131072.0);
  EXPECT_EQ(scaler.good_steps(), 0);
}

TEST(LossScalerTest, InfResetsTheGoodStepCounter) {
  LossScaler scaler(Interval(3));
  scaler.Update(false);
  scaler.Update(false);
  scaler.Update(true);  // 2 good steps lost
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_EQ(scaler.good_steps(), 0);
  scaler.Update(false);
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 32768.0);  // only 2 since the inf
  scaler.Update(false);
  EXPECT_EQ(scaler.scale(), 65536.0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(LossScalerTest, TraceWithCustomFactors) {
  LossScaler::Options options;
  options.init_scale = 1024.0;
  options.growth_factor = 4.0;
  options.backoff_factor = 0.25;
  options.growth_interval = 2;
  LossScaler scaler(options);
  // (found_inf, scale after, skipped after), by hand.
  const struct {
    bool inf;
    double scale;
    int64_t skipped;
  } trace[] = {
      {false, 1024, 0}, {false, 4096, 0}, {true, 1024, 1}, {false, 1024, 1}, {true, 256, 2},
      {true, 64, 3},    {false, 64, 3},   {false, 256, 3}, {false, 256, 3},  {false, 1024, 3},
  };
  int i = 0;
  for (const auto& t : trace) {
    scaler.Update(t.inf);
    EXPECT_EQ(scaler.scale(), t.scale) << "update " << i;
    EXPECT_EQ(scaler.skipped_steps(), t.skipped) << "update " << i;
    ++i;
  }
}

TEST(LossScalerTest, RestoreContinuesFromCheckpoint) {
  LossScaler scaler(Interval(3));
  scaler.Restore(4096.0, 2, 5);
  EXPECT_EQ(scaler.scale(), 4096.0);
  EXPECT_EQ(scaler.good_steps(), 2);
  EXPECT_EQ(scaler.skipped_steps(), 5);
  scaler.Update(false);  // the 3rd good step, counting the restored 2
  EXPECT_EQ(scaler.scale(), 8192.0);
  scaler.Update(true);
  EXPECT_EQ(scaler.scale(), 4096.0);
  EXPECT_EQ(scaler.skipped_steps(), 6);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
