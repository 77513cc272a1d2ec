// trainer/io/host_snapshot.h: the copies hold the values of the moment of Copy() (later changes to
// the sources do not reach them), are contiguous host tensors whatever the sources' layout,
// reuse their buffers while shapes hold and reallocate when one changes; from a GPU (on the
// GPU host's ctest) they are page-locked and equal to the device's values.
#include "trainer/io/host_snapshot.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

TEST(HostSnapshot, CopiesTheValuesOfTheMoment) {
  torch::manual_seed(0);
  HostSnapshot::Tensors live = {{"w", torch::randn({4, 3})},
                                {"t", torch::randn({3, 5}).t()},  // not contiguous
                                {"i", torch::arange(6, torch::kLong)}};
  HostSnapshot snapshot;
  const HostSnapshot::Tensors copy = snapshot.Copy(live);
  ASSERT_EQ(copy.size(), 3u);
  for (const auto& [name, t] : live) {
    EXPECT_TRUE(torch::equal(copy.at(name), t)) << name;
    EXPECT_TRUE(copy.at(name).is_contiguous()) << name;
    EXPECT_EQ(copy.at(name).device().type(), torch::kCPU) << name;
  }
  const torch::Tensor before = live["w"].clone();
  live["w"].add_(1.0);
  EXPECT_TRUE(torch::equal(copy.at("w"), before));
  EXPECT_EQ(snapshot.bytes(), (12 + 15) * 4 + 6 * 8);
  EXPECT_EQ(snapshot.pinned_bytes(), 0);
}

TEST(HostSnapshot, ReusesBuffersUntilAShapeChanges) {
  HostSnapshot snapshot;
  HostSnapshot::Tensors live = {{"a", torch::ones({8})}, {"b", torch::zeros({2, 2})}};
  const void* a = snapshot.Copy(live).at("a").data_ptr();
  const void* b = snapshot.Copy(live).at("b").data_ptr();
  live["a"].fill_(7);
  HostSnapshot::Tensors second = snapshot.Copy(live);
  EXPECT_EQ(second.at("a").data_ptr(), a);
  EXPECT_EQ(second.at("b").data_ptr(), b);
  EXPECT_EQ(second.at("a")[0].item<float>(), 7.0f);
  live["b"] = torch::full({3}, 2.0, torch::kDouble);  // another shape and dtype
  const HostSnapshot::Tensors third = snapshot.Copy(live);
  EXPECT_EQ(third.at("b").scalar_type(), torch::kDouble);
  EXPECT_TRUE(torch::equal(third.at("b"), live["b"]));
  EXPECT_EQ(third.at("a").data_ptr(), a);
}

TEST(HostSnapshot, FromAGpuIntoPageLockedBuffers) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no GPU here (runs on the GPU host's ctest)";
  torch::manual_seed(0);
  HostSnapshot::Tensors live = {{"w", torch::randn({1024, 1024}, torch::kCUDA)},
                                {"h", torch::randn({64, 3}, torch::kCUDA).to(torch::kBFloat16)}};
  HostSnapshot snapshot;
  const HostSnapshot::Tensors copy = snapshot.Copy(live);
  for (const auto& [name, t] : live) {
    EXPECT_TRUE(copy.at(name).is_pinned()) << name;
    EXPECT_TRUE(torch::equal(copy.at(name), t.cpu())) << name;
  }
  EXPECT_EQ(snapshot.pinned_bytes(), snapshot.bytes());
  live["w"].mul_(2.0);  // queued after the copy: the copy keeps the old values
  const torch::Tensor doubled = live["w"].cpu();
  EXPECT_TRUE(torch::equal(copy.at("w") * 2.0, doubled));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
