// What `hpo sweep` says of dev mode's local agent (hpo/commands/sweep_command.h DevModeSlots):
// GPU slots, and trials sharing a GPU, on a host with GPUs; CPU slots on one without, where
// trials share nothing whatever resources.trials_per_gpu says.
#include "hpo/commands/sweep_command.h"

#include "gtest/gtest.h"
#include "hpo/config/sweep_config.h"
#include "hpo/config/sweep_preflight.h"

namespace tunefleet {
namespace hpo {
namespace {

TEST(DevModeSlotsTest, AHostWithGpusSaysHowManyTrialsShareOne) {
  LocalHost host;
  host.gpus = 8;
  host.cpus = 64;
  SweepConfig config;
  config.trials_per_gpu = 4;
  EXPECT_EQ(DevModeSlots(4, host, config), "4 slot(s), up to 4 trials a GPU");
  config.trials_per_gpu = 1;
  EXPECT_EQ(DevModeSlots(8, host, config), "8 slot(s)");
}

TEST(DevModeSlotsTest, ACpuOnlyHostSaysCpuSlotsAndCores) {
  LocalHost host;
  host.gpus = 0;
  host.cpus = 2;
  SweepConfig config;
  config.trials_per_gpu = 4;  // for GPUs: CPU slots are not shared
  EXPECT_EQ(DevModeSlots(4, host, config), "4 CPU slot(s) on 2 core(s), 1 trial a slot");
  config.trials_per_gpu = 1;
  config.gpus_per_trial = 2;
  EXPECT_EQ(DevModeSlots(4, host, config), "4 CPU slot(s) on 2 core(s), 1 rank a slot");
}

}  // namespace
}  // namespace hpo
}  // namespace tunefleet
