// Whether one more trial fits a shared GPU (launcher/agent/gpu_share.h): each tenant reserves its
// estimate and a context less what NVML already counts for it; a newcomer needs its estimate, a
// context and the margin in what is left.
#include "launcher/agent/gpu_share.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace launcher {
namespace {

constexpr double kTotal = 10000;  // MiB: margin 512 (5% is 500)

TEST(GpuShareTest, TheMarginIsFivePercentOrHalfAGib) {
  EXPECT_EQ(ShareMarginMib(kTotal), 512);
  EXPECT_EQ(ShareMarginMib(81559), 0.05 * 81559);
}

TEST(GpuShareTest, TenantsThatHaveNotAllocatedYetReserveTheirEstimate) {
  // 9000 MiB free; trials of 2500 MiB: each needs 2500 + 768 + 512 = 3780.
  EXPECT_TRUE(DecideShare(2500, 9000, kTotal, {}).fits);
  const ShareTenant starting{2500, std::nullopt};
  ShareDecision one = DecideShare(2500, 9000, kTotal, {starting});
  EXPECT_DOUBLE_EQ(one.headroom_mib, 9000 - 3268);
  EXPECT_TRUE(one.fits);
  ShareDecision two = DecideShare(2500, 9000, kTotal, {starting, starting});
  EXPECT_DOUBLE_EQ(two.headroom_mib, 9000 - 2 * 3268);
  EXPECT_FALSE(two.fits);
  EXPECT_NE(two.why.find("needs 3.69 GiB"), std::string::npos) << two.why;
}

TEST(GpuShareTest, WhatATenantUsesAlreadyIsNotCountedTwice) {
  // A tenant at its peak (NVML counts 3268 MiB for it, already out of `free`) reserves nothing.
  const ShareTenant peaked{2500, 3268};
  EXPECT_DOUBLE_EQ(DecideShare(2500, 5732, kTotal, {peaked}).headroom_mib, 5732);
  // Beyond its estimate, still nothing (never negative).
  EXPECT_DOUBLE_EQ(DecideShare(2500, 4000, kTotal, {ShareTenant{2500, 5000}}).headroom_mib, 4000);
  // Half way: the other half.
  EXPECT_DOUBLE_EQ(DecideShare(0, 7000, kTotal, {ShareTenant{2500, 1634}}).headroom_mib, 5366);
}

TEST(GpuShareTest, AnUnknownEstimateNeedsAContextAndTheMargin) {
  EXPECT_DOUBLE_EQ(DecideShare(0, 9000, kTotal, {}).needed_mib, 768 + 512);
  EXPECT_FALSE(DecideShare(0, 1000, kTotal, {}).fits);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
