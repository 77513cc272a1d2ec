// symmetric_mnrl and triplet against sentence-transformers' own formulas
// (MultipleNegativesSymmetricRankingLoss.compute_loss_from_embeddings, TripletLoss with
// F.pairwise_distance) evaluated by PyTorch 1.13 on the same tensors (Debian's python3-torch):
//   a, p, n = sin(arange(24).view(4, 6) * s + 0.3) for s = 0.7, 1.3, 2.1.
#include <cmath>

#include <torch/torch.h>

#include "gtest/gtest.h"
#include "trainer/tasks/symmetric_mnrl_loss.h"
#include "trainer/tasks/triplet_loss.h"

namespace tunefleet {
namespace trainer {
namespace {

torch::Tensor Make(double s) {
  return torch::sin(torch::arange(24, torch::kFloat).view({4, 6}) * s + 0.3);
}

TEST(RankingLossesTest, SymmetricMnrlAsSentenceTransformers) {
  const torch::Tensor a = Make(0.7), p = Make(1.3), n = Make(2.1);
  EXPECT_NEAR(SymmetricMnrl(a, torch::cat({p, n}), 20).item<double>(), 8.415689468383789, 1e-5);
  EXPECT_NEAR(SymmetricMnrl(a, p, 20).item<double>(), 8.412778854370117, 1e-5);
}

TEST(RankingLossesTest, TripletAsSentenceTransformers) {
  const torch::Tensor a = Make(0.7), p = Make(1.3), n = Make(2.1);
  EXPECT_NEAR(TripletLoss(a, p, n).item<double>(), 4.937432289123535, 1e-5);
  EXPECT_NEAR(TripletLoss(a, p, n, 1.0).item<double>(), 0.9374319911003113, 1e-5);
}

TEST(RankingLossesTest, GradientsFlow) {
  torch::Tensor a = Make(0.7).requires_grad_(true);
  SymmetricMnrl(a, Make(1.3), 20).backward();
  EXPECT_GT(a.grad().norm().item<double>(), 0);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
