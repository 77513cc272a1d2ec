// TaskModel::EmbedPair (both sides of a pair in one encoder pass) against Embed of each side:
// the same embeddings and the same gradients, in fp32 on the CPU, whether the sides differ in
// length, are padded, or neither.
#include "trainer/tasks/task_model.h"
#include "trainer/tasks/loss_registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace tunefleet {
namespace trainer {
namespace {

TaskModel TinyModel() {
  BertConfig c;
  c.vocab_size = 100;
  c.hidden_size = 32;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 4;
  c.intermediate_size = 37;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  torch::manual_seed(0);
  return TaskModel(BertModel(c), Pooling::kMean, MakeTask("sts").value(), 0);
}

// B rows of ids in [1, 100); row r has lengths[r] real tokens, the rest padding (id 0, mask 0).
TextBatch Batch(const std::vector<int64_t>& lengths, int64_t width) {
  TextBatch b;
  const int64_t rows = static_cast<int64_t>(lengths.size());
  b.input_ids = torch::randint(1, 100, {rows, width}, torch::kLong);
  b.attention_mask = torch::zeros({rows, width}, torch::kLong);
  b.padded = false;
  for (int64_t r = 0; r < rows; ++r) {
    b.attention_mask[r].narrow(0, 0, lengths[static_cast<size_t>(r)]).fill_(1);
    b.input_ids[r]
        .narrow(0, lengths[static_cast<size_t>(r)], width - lengths[static_cast<size_t>(r)])
        .fill_(0);
    if (lengths[static_cast<size_t>(r)] < width) b.padded = true;
  }
  b.token_type_ids = torch::zeros({rows, width}, torch::kLong);
  return b;
}

void ExpectSame(const TextBatch& a, const TextBatch& b) {
  TaskModel model = TinyModel();
  model->zero_grad();
  // A random linear function of the embeddings (a plain sum is flat through the last
  // LayerNorm).
  const torch::Tensor ua = model->Embed(a), ub = model->Embed(b);
  const torch::Tensor wa = torch::randn(ua.sizes()), wb = torch::randn(ub.sizes());
  ((ua * wa).sum() + (ub * wb).sum()).backward();
  std::vector<torch::Tensor> separate;
  for (const torch::Tensor& p : model->parameters()) {
    separate.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  }
  model->zero_grad();
  const auto [pa, pb] = model->EmbedPair(a, b);
  ((pa * wa).sum() + (pb * wb).sum()).backward();
  EXPECT_TRUE(torch::allclose(pa, ua, 1e-5, 1e-6)) << (pa - ua).abs().max().item<double>();
  EXPECT_TRUE(torch::allclose(pb, ub, 1e-5, 1e-6)) << (pb - ub).abs().max().item<double>();
  size_t i = 0;
  for (const torch::Tensor& p : model->parameters()) {
    const torch::Tensor g = p.grad().defined() ? p.grad() : torch::zeros_like(p);
    // Relative to the gradient's norm: fp32 sums of the same terms in another order.
    const double diff = (g - separate[i]).norm().item<double>();
    EXPECT_LE(diff, 1e-5 * separate[i].norm().item<double>() + 1e-9)
        << "parameter " << i << " " << p.sizes() << ": gradient norm "
        << separate[i].norm().item<double>();
    ++i;
  }
}

TEST(EmbedPairTest, SidesOfDifferentLengths) {
  torch::manual_seed(1);
  ExpectSame(Batch({5, 8, 3}, 8), Batch({12, 7, 16}, 16));
}

TEST(EmbedPairTest, SecondSideShorterAndUnpadded) {
  torch::manual_seed(2);
  ExpectSame(Batch({9, 4}, 9), Batch({6, 6}, 6));
}

TEST(EmbedPairTest, NeitherPadded) {
  torch::manual_seed(3);
  const TextBatch a = Batch({10, 10}, 10), b = Batch({10, 10}, 10);
  ASSERT_FALSE(a.padded);
  ExpectSame(a, b);
}

TEST(EmbedPairTest, SameAsTheLossOfEachSide) {
  torch::manual_seed(4);
  TaskModel model = TinyModel();
  TaskBatch batch;
  batch.first = Batch({5, 8, 3, 8}, 8);
  batch.second = Batch({12, 7, 16, 2}, 16);
  batch.scores = torch::rand({4});
  batch.size = 4;
  const torch::Tensor u = model->Embed(batch.first), v = model->Embed(batch.second);
  const torch::Tensor want =
      (torch::cosine_similarity(u, v, 1) - batch.scores).pow(2).mean();  // CosineSimilarityLoss
  EXPECT_NEAR(model->Loss(batch).item<double>(), want.item<double>(), 1e-6);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
