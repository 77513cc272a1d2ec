// Activation checkpointing of the BERT encoder (BertModelImpl::set_gradient_checkpointing)
// against the same model without it: in training mode with dropout 0.1 (so the recomputation
// must replay the forward's random masks), the loss and every parameter gradient agree to float
// rounding in fp32, and under bf16 autocast (the recomputation must run under the forward's
// autocast state). Also: a batch without padding gives the same result with no mask as with an
// all-ones mask (the path that lets SDPA pick its flash kernel). MPNet
// (data/golden/families/mpnet): its relative position bias, one table all layers share, gets the
// same gradient through the recomputation.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "trainer/model/autocast.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/hf_model_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kModel[] = "data/bert-tiny-random";
constexpr char kMpnet[] = "data/golden/families/mpnet";

BertModel TrainingModel(bool checkpointing, const char* dir = kModel) {
  auto checkpoint = LoadBertCheckpoint(dir);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.status();
  BertModel model(checkpoint->config);  // dropout 0.1 from config.json
  EXPECT_TRUE(LoadBertWeights(model, checkpoint->tensors).ok());
  model->train();
  model->set_gradient_checkpointing(checkpointing);
  return model;
}

struct Result {
  double loss;
  std::map<std::string, torch::Tensor> grads;
};

Result LossAndGrads(BertModel& model, Precision precision, uint64_t dropout_seed = 11) {
  torch::manual_seed(3);
  const int64_t vocab = model->config().vocab_size;
  const torch::Tensor ids =
      torch::randint(vocab / 30, vocab * 30000 / 30522, {4, 12}, torch::kLong);
  torch::Tensor mask = torch::ones({4, 12}, torch::kLong);
  mask.index_put_({1, torch::indexing::Slice(7)}, 0);
  mask.index_put_({3, torch::indexing::Slice(3)}, 0);
  const torch::Tensor weights = torch::randn({4, 12, model->config().hidden_size});
  torch::manual_seed(dropout_seed);  // the dropout masks
  torch::Tensor loss;
  {
    AutocastScope autocast(torch::kCPU, precision);
    BertOutput out = model->forward(ids, torch::Tensor(), mask);
    loss = (out.last_hidden_state.to(torch::kFloat) * weights).sum() +
           out.pooler_output.to(torch::kFloat).sum();
  }
  loss.backward();
  Result r{loss.item<double>(), {}};
  for (const auto& p : model->named_parameters()) {
    if (p.value().grad().defined()) r.grads[p.key()] = p.value().grad().clone();
  }
  return r;
}

void ExpectSame(const Result& a, const Result& b, double tol) {
  EXPECT_NEAR(a.loss, b.loss, tol * std::max(1.0, std::abs(a.loss)));
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (const auto& [name, g] : a.grads) {
    ASSERT_TRUE(b.grads.count(name)) << name;
    const double scale = std::max(1.0, g.abs().max().item<double>());
    EXPECT_LE((g - b.grads.at(name)).abs().max().item<double>(), tol * scale) << name;
  }
}

TEST(GradCheckpointing, SameGradientsInFp32WithDropout) {
  BertModel plain = TrainingModel(false), checkpointed = TrainingModel(true);
  const Result a = LossAndGrads(plain, Precision::kFp32);
  const Result b = LossAndGrads(checkpointed, Precision::kFp32);
  EXPECT_EQ(a.grads.size(), plain->parameters().size());
  ExpectSame(a, b, 1e-5);
}

TEST(GradCheckpointing, SameGradientsForMpnetsRelativePositionBias) {
  BertModel plain = TrainingModel(false, kMpnet), checkpointed = TrainingModel(true, kMpnet);
  const Result a = LossAndGrads(plain, Precision::kFp32);
  const Result b = LossAndGrads(checkpointed, Precision::kFp32);
  EXPECT_EQ(a.grads.size(), plain->parameters().size());
  ASSERT_EQ(b.grads.count("encoder.relative_attention_bias.weight"), 1u);
  EXPECT_GT(b.grads.at("encoder.relative_attention_bias.weight").abs().max().item<double>(), 0);
  ExpectSame(a, b, 1e-5);
}

TEST(GradCheckpointing, SameGradientsUnderBf16Autocast) {
  BertModel plain = TrainingModel(false), checkpointed = TrainingModel(true);
  const Result a = LossAndGrads(plain, Precision::kBf16);
  const Result b = LossAndGrads(checkpointed, Precision::kBf16);
  ExpectSame(a, b, 1e-5);
  // And bf16 really ran: it differs from fp32.
  BertModel fp32 = TrainingModel(false);
  const Result c = LossAndGrads(fp32, Precision::kFp32);
  EXPECT_GT(std::abs(a.loss - c.loss), 1e-6);
}

TEST(GradCheckpointing, OtherDropoutMasksGiveOtherGradients) {
  // Guards the tests above: were the replay to draw new dropout masks, they would fail.
  BertModel a_model = TrainingModel(false), b_model = TrainingModel(false);
  const Result a = LossAndGrads(a_model, Precision::kFp32, 11);
  const Result b = LossAndGrads(b_model, Precision::kFp32, 12);
  double worst = 0;
  for (const auto& [name, g] : a.grads) {
    worst = std::max(worst, (g - b.grads.at(name)).abs().max().item<double>());
  }
  EXPECT_GT(worst, 1e-3);
}

TEST(NoPaddingPath, NoMaskEqualsAllOnesMask) {
  auto model = LoadBertModel(kModel);
  ASSERT_TRUE(model.ok()) << model.status();
  torch::NoGradGuard no_grad;
  torch::manual_seed(5);
  const torch::Tensor ids = torch::randint(1000, 30000, {3, 9}, torch::kLong);
  const BertOutput with_mask = (*model)->forward(ids, torch::Tensor(), torch::ones_like(ids));
  const BertOutput without = (*model)->forward(ids);
  EXPECT_LT((with_mask.last_hidden_state - without.last_hidden_state).abs().max().item<double>(),
            1e-6);
  EXPECT_LT((with_mask.pooler_output - without.pooler_output).abs().max().item<double>(), 1e-6);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
