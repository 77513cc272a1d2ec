// EstimateTrainingMemory (trainer/train/memory_estimate.h) against hand-computed numbers for
// BERT-base (BertConfig's defaults: H 768, A 12, L 12) with 110M parameters: model state 18 bytes
// per parameter in bf16/fp16, 16 in fp32; activations L * B * T * H * (34 + 5 A T / H) bytes per
// pass in 16-bit (twice in fp32), linear in batch and passes, and with gradient checkpointing
// L * 2 B T H (4 in fp32) plus one full layer.
#include "trainer/train/memory_estimate.h"

#include <string>

#include "gtest/gtest.h"
#include "trainer/model/autocast.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/model_family_registry.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr int64_t kParams = 110'000'000;

// B = 32, T = 128, H = 768, A = 12: B T H = 3,145,728; 34 + 5 * 12 * 128 / 768 = 44;
// one layer 138,412,032 B; 12 layers 1,660,944,384 B per pass (16-bit).
constexpr double kBth = 32.0 * 128 * 768;
constexpr double kLayer16 = 138'412'032.0;
constexpr double kPass16 = 1'660'944'384.0;
// Checkpointed: 12 * 2 * B T H = 75,497,472 + one layer = 213,909,504 B per pass (16-bit).
constexpr double kCheckpointedPass16 = 213'909'504.0;

TEST(MemoryEstimateTest, BertBaseConfigDefaults) {
  const BertConfig config;
  EXPECT_EQ(config.hidden_size, 768);
  EXPECT_EQ(config.num_attention_heads, 12);
  EXPECT_EQ(config.num_hidden_layers, 12);
  EXPECT_DOUBLE_EQ(kBth * 44, kLayer16);
  EXPECT_DOUBLE_EQ(12 * kLayer16, kPass16);
  EXPECT_DOUBLE_EQ(12 * 2 * kBth + kLayer16, kCheckpointedPass16);
}

// transformers' BertModel(BertConfig()) has 109,482,240 parameters, 590,592 of them the pooler's.
TEST(MemoryEstimateTest, EncoderParametersAreBertBasesLessThePooler) {
  EXPECT_EQ(EncoderParameters(BertConfig()), 109482240 - 590592);
}

// transformers' DistilBertModel(DistilBertConfig()) (distilbert-base-uncased's config.json) has
// 66,362,880 parameters and no pooler; counted through the distilbert family's parameters.
TEST(MemoryEstimateTest, EncoderParametersCountDistilBertsOwnKeys) {
  absl::StatusOr<BertConfig> c = ParseModelConfig(
      R"({"model_type": "distilbert", "vocab_size": 30522, "dim": 768, "n_layers": 6,
          "n_heads": 12, "hidden_dim": 3072, "activation": "gelu", "dropout": 0.1,
          "attention_dropout": 0.1, "max_position_embeddings": 512, "pad_token_id": 0,
          "sinusoidal_pos_embds": false})",
      "distilbert-base-uncased/config.json");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(EncoderParameters(*c), 66362880);
}

// The trainer's check at its start: a batch whose estimate at 2 tokens a sequence exceeds the
// device's memory is refused naming train.batch_size. BERT-large at 2^20 examples needs about
// 6.5 TiB in fp32, more than any host's RAM; BERT-base at 32 fits any host that builds this.
TEST(MemoryEstimateTest, ABatchThatCannotFitTheDeviceIsRefused) {
  BertConfig large;
  large.hidden_size = 1024;
  large.num_hidden_layers = 24;
  large.num_attention_heads = 16;
  large.intermediate_size = 4096;
  const absl::Status refused =
      CheckBatchCanFit(large, EncoderParameters(large), int64_t{1} << 20, 2, Precision::kFp32,
                       false, 1, torch::Device(torch::kCPU));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_NE(std::string(refused.message())
                .find("train.batch_size: 1048576 examples a step need at least "),
            std::string::npos)
      << refused;
  EXPECT_NE(std::string(refused.message()).find("more than this host's "), std::string::npos)
      << refused;
  const BertConfig base;
  EXPECT_TRUE(CheckBatchCanFit(base, EncoderParameters(base), 32, 2, Precision::kFp32, false, 1,
                               torch::Device(torch::kCPU))
                  .ok());
}

TEST(MemoryEstimateTest, ModelStateBytesPerParameter) {
  const BertConfig config;
  const MemoryEstimate bf16 =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kBf16, false);
  EXPECT_EQ(bf16.parameters, kParams);
  EXPECT_EQ(bf16.bytes_per_parameter, 18);
  EXPECT_DOUBLE_EQ(bf16.model_state_bytes, kParams * 18.0);
  const MemoryEstimate fp16 =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kFp16, false);
  EXPECT_EQ(fp16.bytes_per_parameter, 18);
  EXPECT_DOUBLE_EQ(fp16.model_state_bytes, kParams * 18.0);
  const MemoryEstimate fp32 =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kFp32, false);
  EXPECT_EQ(fp32.bytes_per_parameter, 16);
  EXPECT_DOUBLE_EQ(fp32.model_state_bytes, kParams * 16.0);
  EXPECT_DOUBLE_EQ(fp32.optimizer_state_bytes, kParams * 8.0);
  // ZeRO-1: the 8 bytes of moments split over the ranks, the rest whole.
  const MemoryEstimate zero1 =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kFp32, false, 2);
  EXPECT_DOUBLE_EQ(zero1.bytes_per_parameter, 12);
  EXPECT_DOUBLE_EQ(zero1.optimizer_state_bytes, kParams * 4.0);
  EXPECT_DOUBLE_EQ(zero1.activation_bytes, fp32.activation_bytes);
  EXPECT_DOUBLE_EQ(EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kBf16, false, 8)
                       .model_state_bytes,
                   kParams * 11.0);
  // The model state does not depend on batch, length, passes or checkpointing.
  EXPECT_DOUBLE_EQ(
      EstimateTrainingMemory(config, kParams, 1, 16, 1, Precision::kBf16, true).model_state_bytes,
      kParams * 18.0);
}

TEST(MemoryEstimateTest, ActivationsHandComputed) {
  const BertConfig config;
  const MemoryEstimate e =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kBf16, false);
  EXPECT_EQ(e.batch, 32);
  EXPECT_EQ(e.seq, 128);
  EXPECT_EQ(e.passes, 2);
  EXPECT_DOUBLE_EQ(e.activation_bytes, 2 * kPass16);  // 3,321,888,768
  EXPECT_DOUBLE_EQ(e.total_bytes(), kParams * 18.0 + 2 * kPass16);
  // fp32: twice the bytes.
  EXPECT_DOUBLE_EQ(
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kFp32, false).activation_bytes,
      4 * kPass16);
  // Another length: T = 256 -> 34 + 5 * 12 * 256 / 768 = 54; 32 * 256 * 768 * 54 * 12 per pass.
  EXPECT_DOUBLE_EQ(
      EstimateTrainingMemory(config, kParams, 32, 256, 1, Precision::kBf16, false).activation_bytes,
      32.0 * 256 * 768 * 54 * 12);
}

TEST(MemoryEstimateTest, ActivationsLinearInBatchAndPasses) {
  const BertConfig config;
  for (const bool checkpointing : {false, true}) {
    for (const Precision p : {Precision::kBf16, Precision::kFp32}) {
      const double base =
          EstimateTrainingMemory(config, kParams, 8, 128, 1, p, checkpointing).activation_bytes;
      ASSERT_GT(base, 0);
      for (const int64_t batch : {1, 16, 24, 64}) {
        for (const int passes : {1, 2}) {
          EXPECT_DOUBLE_EQ(
              EstimateTrainingMemory(config, kParams, batch, 128, passes, p, checkpointing)
                  .activation_bytes,
              base * static_cast<double>(batch) / 8.0 * passes)
              << "batch " << batch << ", passes " << passes << ", checkpointing " << checkpointing
              << ", precision " << PrecisionName(p);
        }
      }
    }
  }
}

TEST(MemoryEstimateTest, GradCheckpointingReducesActivations) {
  const BertConfig config;
  const MemoryEstimate full =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kBf16, false);
  const MemoryEstimate ckpt =
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kBf16, true);
  EXPECT_DOUBLE_EQ(ckpt.activation_bytes, 2 * kCheckpointedPass16);  // 427,819,008
  EXPECT_LT(ckpt.activation_bytes, full.activation_bytes);
  EXPECT_DOUBLE_EQ(ckpt.model_state_bytes, full.model_state_bytes);
  EXPECT_DOUBLE_EQ(
      EstimateTrainingMemory(config, kParams, 32, 128, 2, Precision::kFp32, true).activation_bytes,
      4 * kCheckpointedPass16);
}

TEST(MemoryEstimateTest, UsesTheConfig) {
  // bert-tiny-like: H 128, A 2, L 2; T 64: 34 + 5 * 2 * 64 / 128 = 39.
  BertConfig config;
  config.hidden_size = 128;
  config.num_attention_heads = 2;
  config.num_hidden_layers = 2;
  const MemoryEstimate e =
      EstimateTrainingMemory(config, 4'386'178, 16, 64, 1, Precision::kBf16, false);
  EXPECT_DOUBLE_EQ(e.activation_bytes, 2 * 16.0 * 64 * 128 * 39);
  EXPECT_DOUBLE_EQ(e.model_state_bytes, 4'386'178 * 18.0);
}

TEST(MemoryEstimateTest, DescribeNamesTheParts) {
  const MemoryEstimate e =
      EstimateTrainingMemory(BertConfig(), kParams, 32, 128, 2, Precision::kBf16, false);
  const std::string text = e.Describe();
  EXPECT_NE(text.find("110.00M parameters"), std::string::npos) << text;
  EXPECT_NE(text.find("18 B"), std::string::npos) << text;
  EXPECT_NE(text.find("batch 32 x 128 tokens"), std::string::npos) << text;
  EXPECT_NE(text.find("2 passes"), std::string::npos) << text;
  EXPECT_EQ(text.find("AdamW state"), std::string::npos) << text;
  // Sharded over 3 ranks: 10 + 8/3 bytes, and the share of the moments.
  const std::string sharded =
      EstimateTrainingMemory(BertConfig(), kParams, 32, 128, 2, Precision::kBf16, false, 3)
          .Describe();
  EXPECT_NE(sharded.find("x 12.67 B (AdamW state 1/3: 0.27 GiB) = 1.30 GiB"), std::string::npos)
      << sharded;
}

TEST(MemoryEstimateTest, GiB) { EXPECT_DOUBLE_EQ(GiB(3.0 * 1024 * 1024 * 1024), 3.0); }

TEST(MemoryEstimateTest, CpuPeakIsPositive) {
  EXPECT_GT(PeakMemoryBytes(torch::Device(torch::kCPU)), 0.0);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
