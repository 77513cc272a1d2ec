#include "hpo/lr_scaling.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(LrScalingTest, LinearScalesWithGlobalBatch) {
  LrScalingSpec linear{"linear", 32};
  EXPECT_DOUBLE_EQ(EffectiveLr(linear, 1e-4, 32, 1, 1), 1e-4);
  EXPECT_DOUBLE_EQ(EffectiveLr(linear, 1e-4, 64, 1, 1), 2e-4);
  // Seed 000's example: 8 GPUs x 64 per GPU = 512 global -> 16x.
  EXPECT_DOUBLE_EQ(EffectiveLr(linear, 2e-5, 64, 8, 1), 2e-5 * 16);
  EXPECT_DOUBLE_EQ(EffectiveLr(linear, 1e-4, 16, 2, 4), 1e-4 * 4);
}

TEST(LrScalingTest, NoneKeepsBaseLr) {
  EXPECT_DOUBLE_EQ(EffectiveLr(LrScalingSpec{"none", 32}, 3e-5, 128, 8, 2), 3e-5);
}

TEST(LrScalingTest, UsesSweepRanksAndAccumulation) {
  SweepConfig c;
  c.gpus_per_trial = 2;
  c.trainer.grad_accum = 2;
  c.lr_scaling = {"linear", 32};
  EXPECT_DOUBLE_EQ(EffectiveLr(c, 1e-4, 16), 2e-4);
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
