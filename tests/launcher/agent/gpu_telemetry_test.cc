// GpuUsageMeter: a run's GPU usage from the samples of its slots (launcher/agent/gpu_telemetry.h).
// GpuTelemetry itself (NVML through dlopen) is tested end to end with the fake NVML in
// tests/integration:gpu_telemetry_test.
#include "launcher/agent/gpu_telemetry.h"

#include <gtest/gtest.h>

namespace tunefleet {
namespace launcher {
namespace {

SlotSample Sample(int slot, double util, double mem_mib, std::optional<double> power_w,
                  std::optional<double> counter_j) {
  SlotSample s;
  s.slot = slot;
  s.gpu.util_pct = util;
  s.gpu.mem_used_mib = mem_mib;
  s.gpu.mem_total_mib = 81559;
  s.gpu.power_w = power_w;
  s.gpu.energy_j = counter_j;
  return s;
}

TEST(GpuUsageMeterTest, EmptyUntilASample) {
  GpuUsageMeter meter;
  EXPECT_TRUE(meter.empty());
  EXPECT_EQ(meter.Usage().samples(), 0);
  EXPECT_EQ(meter.Usage().util_mean(), 0);
}

TEST(GpuUsageMeterTest, TwoGpusWithEnergyCounters) {
  GpuUsageMeter meter;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  meter.Add(Sample(0, 90, 5000, 300, 10000), t0);
  meter.Add(Sample(3, 70, 7000, 250, 20000), t0);
  meter.Add(Sample(0, 100, 6000, 350, 10330), t0 + absl::Seconds(1));
  meter.Add(Sample(3, 60, 6500, 200, 20220), t0 + absl::Seconds(1));
  const comm::GpuUsage u = meter.Usage();
  EXPECT_FALSE(meter.empty());
  EXPECT_EQ(u.samples(), 4);
  EXPECT_DOUBLE_EQ(u.util_mean(), (90 + 70 + 100 + 60) / 4.0);
  EXPECT_DOUBLE_EQ(u.mem_peak_mib(), 7000);          // the most on one GPU, at any sample
  EXPECT_DOUBLE_EQ(u.energy_j(), 330 + 220);         // each counter's rise, summed
  EXPECT_DOUBLE_EQ(u.util_now(), (100 + 60) / 2.0);  // the latest samples only
  EXPECT_DOUBLE_EQ(u.mem_now_mib(), 6500);
  EXPECT_DOUBLE_EQ(u.power_now_w(), 350 + 200);
}

TEST(GpuUsageMeterTest, TheBaselineStartsTheEnergyButIsNoSample) {
  GpuUsageMeter meter;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  meter.Baseline(Sample(2, 0, 20000, 90, 5000), t0);  // the GPU before the run: idle
  EXPECT_TRUE(meter.empty());
  meter.Add(Sample(2, 80, 9000, 300, 5300), t0 + absl::Seconds(1));
  const comm::GpuUsage u = meter.Usage();
  EXPECT_EQ(u.samples(), 1);
  EXPECT_DOUBLE_EQ(u.util_mean(), 80);
  EXPECT_DOUBLE_EQ(u.mem_peak_mib(), 9000);
  EXPECT_DOUBLE_EQ(u.energy_j(), 300);  // from the baseline's counter
  // Without a counter, power is integrated from the baseline on.
  GpuUsageMeter powered;
  powered.Baseline(Sample(0, 0, 100, 100, std::nullopt), t0);
  powered.Add(Sample(0, 50, 100, 300, std::nullopt), t0 + absl::Seconds(1));
  EXPECT_DOUBLE_EQ(powered.Usage().energy_j(), 200);
}

TEST(GpuUsageMeterTest, WithoutACounterPowerIsIntegratedOverTime) {
  GpuUsageMeter meter;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  meter.Add(Sample(1, 50, 1000, 100, std::nullopt), t0);
  meter.Add(Sample(1, 50, 1000, 200, std::nullopt), t0 + absl::Seconds(2));    // 300 J
  meter.Add(Sample(1, 50, 1000, 200, std::nullopt), t0 + absl::Seconds(2.5));  // 100 J
  EXPECT_DOUBLE_EQ(meter.Usage().energy_j(), 400);
  // Neither counter nor power: no energy, the rest still counts.
  GpuUsageMeter bare;
  bare.Add(Sample(0, 40, 100, std::nullopt, std::nullopt), t0);
  bare.Add(Sample(0, 60, 100, std::nullopt, std::nullopt), t0 + absl::Seconds(1));
  EXPECT_DOUBLE_EQ(bare.Usage().energy_j(), 0);
  EXPECT_DOUBLE_EQ(bare.Usage().util_mean(), 50);
}

// Trials sharing a GPU (resources.trials_per_gpu): each is credited its share of the GPU's
// energy over each interval, as the trials on the GPU were then (1/2, then 1/4, then its own).
TEST(GpuUsageMeterTest, ASharedGpusEnergyIsSplitByItsTrials) {
  GpuUsageMeter meter;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  auto shared = [](double counter_j, double share) {
    SlotSample s = Sample(0, 50, 4000, 200, counter_j);
    s.share = share;
    return s;
  };
  meter.Baseline(shared(10000, 1), t0);
  meter.Add(shared(10400, 0.5), t0 + absl::Seconds(2));   // 400 J, half of it
  meter.Add(shared(10800, 0.25), t0 + absl::Seconds(4));  // 400 J, a quarter
  meter.Add(shared(11000, 1), t0 + absl::Seconds(5));     // 200 J, alone again
  EXPECT_DOUBLE_EQ(meter.Usage().energy_j(), 200 + 100 + 200);
  EXPECT_DOUBLE_EQ(meter.Usage().power_now_w(), 200);
  GpuUsageMeter powered;  // without a counter: power x time x share
  SlotSample a = Sample(1, 50, 100, 100, std::nullopt), b = a;
  b.share = 0.5;
  powered.Add(a, t0);
  powered.Add(b, t0 + absl::Seconds(2));
  EXPECT_DOUBLE_EQ(powered.Usage().energy_j(), 100);
  EXPECT_DOUBLE_EQ(powered.Usage().power_now_w(), 50);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
