// launcher/agent/agent_slots.h with no GPU visible: CPU slots are never shared, whatever a
// run's trials_per_gpu allows (a slot's cores are one trial's); a run takes a free slot or waits.
#include "launcher/agent/agent_slots.h"

#include <stdlib.h>

#include <map>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "launcher/agent/local_run.h"

namespace tunefleet {
namespace launcher {
namespace {

TEST(AgentSlotsTest, CpuSlotsAreNotShared) {
  // No GPU visible (also on a GPU host: CUDA is not initialised in this process yet), so the
  // agent runs CPU slots.
  ::setenv("CUDA_VISIBLE_DEVICES", "", /*overwrite=*/1);
  auto slots = AgentSlots::Detect(/*max_slots=*/2, {}, {});
  ASSERT_TRUE(slots.ok()) << slots.status();
  ASSERT_TRUE((*slots)->gpus().empty());
  ASSERT_EQ((*slots)->count(), 2);
  comm::TrialSpec spec;
  spec.set_trials_per_gpu(4);
  const std::map<uint64_t, LocalRun> runs;
  std::string why;
  auto first = (*slots)->Take(1, spec, 1, runs, &why);
  auto second = (*slots)->Take(2, spec, 1, runs, &why);
  ASSERT_TRUE(first.has_value() && second.has_value()) << why;
  EXPECT_NE(first->slots, second->slots);
  EXPECT_EQ(first->sharing, 1);
  EXPECT_FALSE((*slots)->Take(3, spec, 1, runs, &why).has_value());  // both slots are held
  EXPECT_NE(why, "");
  (*slots)->Release(1);
  auto third = (*slots)->Take(3, spec, 1, runs, &why);
  ASSERT_TRUE(third.has_value()) << why;
  EXPECT_EQ(third->slots, first->slots);
}

}  // namespace
}  // namespace launcher
}  // namespace tunefleet
