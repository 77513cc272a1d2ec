// trainer/model/inference_model.h, what `trainer encode` and `trainer eval` share: the flag checks,
// the --pooling and --max_len defaults taken from the model folder, the device --device picks, and
// loading a folder (data/bert-tiny-random) with its tokenizer.
#include "trainer/model/inference_model.h"

#include <torch/cuda.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

TEST(InferenceModelTest, ChecksBatchSizeThenDevice) {
  struct Case {
    int64_t batch_size;
    const char* device;
    const char* error;  // "" when accepted
  };
  const Case cases[] = {
      {1, "auto", ""},
      {64, "cpu", ""},
      {32, "cuda", ""},
      {0, "auto", "--batch_size must be >= 1"},
      {-3, "cpu", "--batch_size must be >= 1"},
      {8, "gpu", "--device must be auto, cpu or cuda"},
      {8, "", "--device must be auto, cpu or cuda"},
      {0, "gpu", "--batch_size must be >= 1"},  // the first failing check
  };
  for (const Case& c : cases) {
    const absl::Status s = CheckBatchSizeAndDevice(c.batch_size, c.device);
    if (*c.error == '\0') {
      EXPECT_TRUE(s.ok()) << c.batch_size << " " << c.device << ": " << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.batch_size << " " << c.device;
      EXPECT_EQ(s.message(), c.error) << c.batch_size << " " << c.device;
    }
  }
}

TEST(InferenceModelTest, PoolingIsTheFlagElseTheFolderElseMean) {
  BertCheckpoint info;
  EXPECT_EQ(PoolingNameOrDefault("", info), "mean");
  EXPECT_EQ(PoolingNameOrDefault("max", info), "max");
  info.pooling = "cls";
  EXPECT_EQ(PoolingNameOrDefault("", info), "cls");
  EXPECT_EQ(PoolingNameOrDefault("mean", info), "mean");
  // A mode tunefleet lacks is passed on for ParsePooling to refuse.
  info.pooling = "mean_sqrt_len_tokens";
  EXPECT_EQ(PoolingNameOrDefault("", info), "mean_sqrt_len_tokens");
}

TEST(InferenceModelTest, MaxLenIsTheFlagElseTheFolderElse128WithinThePositions) {
  BertCheckpoint info;
  info.config.max_position_embeddings = 512;
  EXPECT_EQ(MaxLenOrDefault(0, info), 128);
  EXPECT_EQ(MaxLenOrDefault(64, info), 64);
  EXPECT_EQ(MaxLenOrDefault(1000, info), 512);
  info.max_seq_length = 256;
  EXPECT_EQ(MaxLenOrDefault(0, info), 256);
  EXPECT_EQ(MaxLenOrDefault(32, info), 32);
  info.config.max_position_embeddings = 200;
  EXPECT_EQ(MaxLenOrDefault(0, info), 200);
}

TEST(InferenceModelTest, TargetDeviceFollowsTheFlag) {
  for (const int local_rank : {-1, 0, 1}) {
    auto cpu = TargetDevice("cpu", local_rank);
    ASSERT_TRUE(cpu.ok()) << cpu.status();
    EXPECT_TRUE(cpu->is_cpu());
    auto automatic = TargetDevice("auto", local_rank);
    ASSERT_TRUE(automatic.ok()) << automatic.status();
    EXPECT_EQ(automatic->is_cuda(), torch::cuda::is_available());
    auto cuda = TargetDevice("cuda", local_rank);
    if (torch::cuda::is_available()) {
      ASSERT_TRUE(cuda.ok()) << cuda.status();
      EXPECT_TRUE(cuda->is_cuda());
    } else {
      EXPECT_EQ(cuda.status(), absl::FailedPreconditionError("--device cuda: no CUDA device"));
    }
  }
}

TEST(InferenceModelTest, LoadsTheModelAndItsTokenizer) {
  auto loaded = LoadInferenceModel("data/bert-tiny-random");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->bert->config().hidden_size, loaded->info.config.hidden_size);
  EXPECT_EQ(loaded->tokenizer->vocab_size(), loaded->info.config.vocab_size);
  EXPECT_FALSE(LoadInferenceModel("/nonexistent").ok());
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
