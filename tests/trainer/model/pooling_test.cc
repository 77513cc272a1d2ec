// trainer/model/pooling.h: MaskPrompt, the mask of Pooling(include_prompt=False), and mean, max
// and cls pooling over it.
#include "trainer/model/pooling.h"

#include <torch/torch.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

TEST(PoolingTest, MaskPromptZeroesTheFirstColumns) {
  const torch::Tensor mask = torch::tensor({1, 1, 1, 1, 1, 1, 1, 0}, torch::kLong).view({2, 4});
  const torch::Tensor masked = MaskPrompt(mask, 2);
  EXPECT_TRUE(torch::equal(masked, torch::tensor({0, 0, 1, 1, 0, 0, 1, 0}).view({2, 4})));
  EXPECT_TRUE(torch::equal(mask.sum(), torch::tensor(7)));  // a copy: the input is as it was
  EXPECT_TRUE(torch::equal(MaskPrompt(mask, 0), mask));
  EXPECT_TRUE(torch::equal(MaskPrompt(mask, 9), torch::zeros({2, 4}, torch::kLong)));
}

TEST(PoolingTest, PoolsWithoutThePrompt) {
  // One text of 3 tokens whose first 2 are the prompt: mean and max pool the third alone.
  const torch::Tensor states = torch::tensor({1.0f, 10.0f, 5.0f, 2.0f, 3.0f, 4.0f}).view({1, 3, 2});
  const torch::Tensor mask = MaskPrompt(torch::ones({1, 3}, torch::kLong), 2);
  EXPECT_TRUE(torch::allclose(Pool(states, mask, Pooling::kMean), torch::tensor({{3.0f, 4.0f}})));
  EXPECT_TRUE(torch::allclose(Pool(states, mask, Pooling::kMax), torch::tensor({{3.0f, 4.0f}})));
  // cls takes the first token whatever the mask, as sentence-transformers does.
  EXPECT_TRUE(torch::allclose(Pool(states, mask, Pooling::kCls), torch::tensor({{1.0f, 10.0f}})));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
