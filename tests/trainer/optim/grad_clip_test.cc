// Gradient norm and clipping (trainer/optim/grad_clip.h): TotalGradNorm against sqrt(sum of
// squares) of every gradient element, accumulated in double; ClipGradsByTotalNorm against
// LibTorch's torch::nn::utils::clip_grad_norm_ applied to a copy of the same gradients (clipping,
// not clipping, inf and NaN gradients); DefinedGrads skipping parameters without a gradient;
// ScaleGrads against g * factor.
#include "trainer/optim/grad_clip.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <torch/nn/utils/clip_grad.h>
#include <torch/types.h>

#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

// Parameters of a few shapes (one without a gradient) with random gradients.
std::vector<torch::Tensor> ParamsWithGrads(double grad_scale) {
  const std::vector<std::vector<int64_t>> shapes = {{8, 4}, {13}, {}, {3, 2, 5}, {6}};
  std::vector<torch::Tensor> params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    torch::Tensor p = torch::randn(shapes[i], torch::kFloat);
    if (i != 4) p.mutable_grad() = torch::randn(shapes[i], torch::kFloat) * grad_scale;
    params.push_back(p);
  }
  return params;
}

// The same parameters and gradients, copied.
std::vector<torch::Tensor> DeepCopy(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) {
    torch::Tensor q = p.detach().clone();
    if (p.grad().defined()) q.mutable_grad() = p.grad().clone();
    out.push_back(q);
  }
  return out;
}

// sqrt(sum of g^2) over every element of every gradient, in double.
double ReferenceNorm(const std::vector<torch::Tensor>& grads) {
  double sum = 0;
  for (const torch::Tensor& g : grads) {
    const torch::Tensor flat = g.to(torch::kDouble).contiguous().reshape({-1});
    const double* data = flat.data_ptr<double>();
    for (int64_t i = 0; i < flat.numel(); ++i) sum += data[i] * data[i];
  }
  return std::sqrt(sum);
}

void ExpectSameGrads(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want,
                     double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].grad().defined(), want[i].grad().defined()) << i;
    if (!want[i].grad().defined()) continue;
    EXPECT_TRUE(torch::allclose(got[i].grad(), want[i].grad(), rtol, /*atol=*/1e-12,
                                /*equal_nan=*/true))
        << "param " << i << "\ngot\n"
        << got[i].grad() << "\nwant\n"
        << want[i].grad();
  }
}

TEST(GradClipTest, DefinedGradsSkipsMissingOnes) {
  torch::manual_seed(1);
  const std::vector<torch::Tensor> params = ParamsWithGrads(1.0);
  const std::vector<torch::Tensor> grads = DefinedGrads(params);
  ASSERT_EQ(grads.size(), 4u);
  for (size_t i = 0; i < grads.size(); ++i) {
    // The very gradient tensors, not copies.
    EXPECT_TRUE(grads[i].is_same(params[i].grad())) << i;
  }
}

TEST(GradClipTest, TotalNormIsSqrtOfSumOfSquares) {
  torch::manual_seed(2);
  const std::vector<torch::Tensor> params = ParamsWithGrads(3.0);
  const std::vector<torch::Tensor> grads = DefinedGrads(params);
  const torch::Tensor total = TotalGradNorm(grads);
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.scalar_type(), torch::kFloat);
  const double want = ReferenceNorm(grads);
  EXPECT_NEAR(total.item<double>(), want, want * 1e-6);
}

TEST(GradClipTest, TotalNormHandComputed) {
  // [3, 4] and [12]: sqrt(9 + 16 + 144) = 13.
  std::vector<torch::Tensor> grads = {torch::tensor({3.0f, 4.0f}), torch::tensor({12.0f})};
  EXPECT_FLOAT_EQ(TotalGradNorm(grads).item<float>(), 13.0f);
  EXPECT_FLOAT_EQ(TotalGradNorm({torch::tensor({-5.0f})}).item<float>(), 5.0f);
}

TEST(GradClipTest, TotalNormOfNothingIsZero) {
  const torch::Tensor total = TotalGradNorm({});
  EXPECT_EQ(total.dim(), 0);
  EXPECT_EQ(total.item<double>(), 0.0);
}

TEST(GradClipTest, ClipMatchesTorchWhenClipping) {
  torch::manual_seed(3);
  std::vector<torch::Tensor> ours = ParamsWithGrads(2.0);
  std::vector<torch::Tensor> theirs = DeepCopy(ours);
  std::vector<torch::Tensor> grads = DefinedGrads(ours);
  const torch::Tensor total = TotalGradNorm(grads);
  ASSERT_GT(total.item<double>(), 1.0);
  ClipGradsByTotalNorm(grads, total, 1.0);
  const double torch_total = torch::nn::utils::clip_grad_norm_(theirs, 1.0);
  EXPECT_NEAR(total.item<double>(), torch_total, torch_total * 1e-6);
  ExpectSameGrads(ours, theirs, 1e-6);
  // The result has norm max_norm (up to the 1e-6 in the denominator).
  EXPECT_NEAR(ReferenceNorm(DefinedGrads(ours)), 1.0, 1e-5);
  EXPECT_FALSE(ours[4].grad().defined());
}

TEST(GradClipTest, ClipMatchesTorchWhenBelowMaxNorm) {
  torch::manual_seed(4);
  std::vector<torch::Tensor> ours = ParamsWithGrads(0.01);
  const std::vector<torch::Tensor> original = DeepCopy(ours);
  std::vector<torch::Tensor> theirs = DeepCopy(ours);
  std::vector<torch::Tensor> grads = DefinedGrads(ours);
  const torch::Tensor total = TotalGradNorm(grads);
  ASSERT_LT(total.item<double>(), 5.0);
  ClipGradsByTotalNorm(grads, total, 5.0);
  torch::nn::utils::clip_grad_norm_(theirs, 5.0);
  ExpectSameGrads(ours, theirs, 1e-6);
  ExpectSameGrads(ours, original, 0.0);  // coefficient clamped to 1: unchanged
}

// Non-finite gradients: torch (error_if_nonfinite = false) scales by max_norm / (inf + 1e-6) = 0
// or by NaN; ours must leave the same values (NaN where torch has NaN).
TEST(GradClipTest, NonFiniteMatchesTorch) {
  for (const float bad :
       {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    torch::manual_seed(5);
    std::vector<torch::Tensor> ours = ParamsWithGrads(1.0);
    ours[1].mutable_grad()[3] = bad;
    std::vector<torch::Tensor> theirs = DeepCopy(ours);
    std::vector<torch::Tensor> grads = DefinedGrads(ours);
    const torch::Tensor total = TotalGradNorm(grads);
    EXPECT_FALSE(std::isfinite(total.item<double>())) << bad;
    ClipGradsByTotalNorm(grads, total, 1.0);
    torch::nn::utils::clip_grad_norm_(theirs, 1.0);
    ExpectSameGrads(ours, theirs, 0.0);
    EXPECT_FALSE(torch::isfinite(ours[1].grad()).all().item<bool>()) << bad;
  }
}

TEST(GradClipTest, ScaleGradsMultiplies) {
  torch::manual_seed(6);
  std::vector<torch::Tensor> params = ParamsWithGrads(1.0);
  std::vector<torch::Tensor> grads = DefinedGrads(params);
  std::vector<torch::Tensor> want;
  for (const torch::Tensor& g : grads) want.push_back(g * (1.0 / 65536.0));
  ScaleGrads(grads, 1.0 / 65536.0);
  for (size_t i = 0; i < grads.size(); ++i) {
    EXPECT_TRUE(torch::equal(params[i].grad(), want[i])) << i;  // in place, power of 2: exact
  }
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
