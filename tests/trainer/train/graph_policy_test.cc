// Whether `trainer train` replays CUDA graphs (trainer/train/graph_policy.h): graphs only on a GPU
// with a capturing LibTorch, bf16 or fp32, no gradient checkpointing (under DDP too, with "auto");
// each refusal's reason, in order of precedence.
#include "trainer/train/graph_policy.h"

#include "gtest/gtest.h"
#include "trainer/config/train_config.h"

namespace tunefleet {
namespace trainer {
namespace {

// On a GPU, capture available.
std::string OnGpu(const TrainConfig& train) {
  return WhyNoCudaGraphs(train, /*on_gpu=*/true, /*capture_available=*/true);
}

TEST(GraphPolicyTest, DefaultsReplayOnOneGpu) {
  TrainConfig train;  // auto, bf16, no gradient checkpointing
  EXPECT_EQ(OnGpu(train), "");
  train.precision = "fp32";
  EXPECT_EQ(OnGpu(train), "");
  train.cuda_graphs = "true";
  EXPECT_EQ(OnGpu(train), "");
}

TEST(GraphPolicyTest, EachReasonInOrder) {
  TrainConfig train;
  train.cuda_graphs = "false";
  train.precision = "fp16";
  train.grad_checkpointing = true;
  EXPECT_EQ(WhyNoCudaGraphs(train, false, true), "not on a GPU");
  EXPECT_EQ(WhyNoCudaGraphs(train, true, false), "train.cuda_graphs: false");
  train.cuda_graphs = "auto";
  EXPECT_EQ(WhyNoCudaGraphs(train, true, false), "this LibTorch cannot capture CUDA graphs");
  EXPECT_EQ(OnGpu(train),
            "fp16's loss scaling decides on the host whether a step happens "
            "(bf16 replays CUDA graphs)");
  train.precision = "bf16";
  EXPECT_EQ(OnGpu(train),
            "train.grad_checkpointing re-runs layers under saved random states, "
            "which a CUDA graph cannot replay");
  train.grad_checkpointing = false;
  EXPECT_EQ(OnGpu(train), "");  // "auto": graphs, under DDP too
  train.cuda_graphs = "true";
  EXPECT_EQ(OnGpu(train), "");
}

TEST(GraphPolicyTest, CpuNeverReplays) {
  TrainConfig train;
  train.cuda_graphs = "true";
  EXPECT_EQ(WhyNoCudaGraphs(train, false, true), "not on a GPU");
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
