// trainer/model/fused_norm.h against the ATen operations it replaces. The CPU case (CI) checks the
// ATen path; the CUDA cases (ctest on the GPU host, where the CMake build compiled the kernels)
// check the fused kernels' outputs and every gradient against ATen's, in float and bfloat16, with
// dropout, on rows of awkward lengths, and the fallback for rows over 1024 values.
#include "trainer/model/fused_norm.h"

#include <cmath>
#include <tuple>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

namespace tunefleet {
namespace trainer {
namespace {

constexpr double kEps = 1e-12;

struct Result {
  torch::Tensor y, low, dx, dr, dw, db;
};

// Runs y = DropoutAddLayerNorm(...) (fused or ATen) and back-propagates sum(y * gy) +
// sum(low * gl) (low: y in x's dtype; on the ATen path, y cast as autocast would cast it).
Result RunNorm(bool fused, const torch::Tensor& x0, const torch::Tensor& r0,
               const torch::Tensor& w0, const torch::Tensor& b0, double p, const torch::Tensor& gy,
               const torch::Tensor& gl) {
  SetFusedNorm(fused);
  auto leaf = [](const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); };
  torch::Tensor x = leaf(x0), r = leaf(r0), w = leaf(w0), b = leaf(b0);
  NormOutput out = DropoutAddLayerNorm(x, r, w, b, kEps, p, /*training=*/true);
  torch::Tensor low = out.low.defined() ? out.low : out.full.to(x0.scalar_type());
  torch::Tensor loss = (out.full * gy).sum();
  if (gl.defined()) loss = loss + (low.to(torch::kFloat) * gl).sum();
  loss.backward();
  SetFusedNorm(true);
  return {out.full.detach(), out.low.defined() ? out.low.detach() : torch::Tensor(),
          x.grad(),          r.grad(),
          w.grad(),          b.grad()};
}

double MaxRelErr(const torch::Tensor& got, const torch::Tensor& want) {
  const torch::Tensor g = got.to(torch::kDouble), w = want.to(torch::kDouble);
  return ((g - w).abs().max() / (w.abs().max() + 1e-30)).item<double>();
}

struct Inputs {
  torch::Tensor x, r, w, b, gy, gl;
};

Inputs Make(torch::Device device, torch::ScalarType type, int64_t rows, int64_t cols) {
  torch::manual_seed(7);
  const auto f32 = torch::TensorOptions().device(device).dtype(torch::kFloat);
  Inputs in;
  in.x = torch::randn({rows / 2, 2, cols}, f32).mul(3).to(type);
  in.r = torch::randn({rows / 2, 2, cols}, f32);
  in.w = torch::rand({cols}, f32).add(0.5);
  in.b = torch::randn({cols}, f32).mul(0.1);
  in.gy = torch::randn({rows / 2, 2, cols}, f32);
  if (type != torch::kFloat) in.gl = torch::randn({rows / 2, 2, cols}, f32);
  return in;
}

TEST(FusedNorm, CpuRunsTheAtenOperations) {
  const Inputs in = Make(torch::kCPU, torch::kFloat, 6, 20);
  SetFusedNorm(true);
  const NormOutput out = DropoutAddLayerNorm(in.x, in.r, in.w, in.b, kEps, 0.1, false);
  EXPECT_FALSE(out.low.defined());
  const torch::Tensor want = torch::layer_norm(in.x + in.r, {20}, in.w, in.b, kEps);
  EXPECT_TRUE(torch::equal(out.full, want));
  // Training with dropout: some values dropped, none on a row where none are.
  torch::manual_seed(1);
  const NormOutput dropped = DropoutAddLayerNorm(in.x, in.r, in.w, in.b, kEps, 0.5, true);
  EXPECT_FALSE(torch::allclose(dropped.full, want));
}

bool FusedOnGpu() { return torch::cuda::is_available() && FusedNormCompiled(); }

// Tolerances: float outputs and float gradients against ATen within 1e-5 relative (1e-4 for the
// column sums of gamma and beta, summed in another order); bfloat16 gradients of x within one
// bfloat16 rounding (ATen rounds twice: the add's backward, then dropout's).
void ExpectMatchesAten(torch::ScalarType type, int64_t rows, int64_t cols) {
  SCOPED_TRACE(::testing::Message() << c10::toString(type) << " rows " << rows << " cols " << cols);
  const Inputs in = Make(torch::Device(torch::kCUDA, 0), type, rows, cols);
  const Result f = RunNorm(true, in.x, in.r, in.w, in.b, 0.0, in.gy, in.gl);
  const Result a = RunNorm(false, in.x, in.r, in.w, in.b, 0.0, in.gy, in.gl);
  ASSERT_EQ(f.low.defined(), type != torch::kFloat);
  EXPECT_FALSE(a.low.defined());
  EXPECT_EQ(f.y.scalar_type(), torch::kFloat);
  EXPECT_LE(MaxRelErr(f.y, a.y), 1e-5);
  if (f.low.defined()) {
    EXPECT_EQ(f.low.scalar_type(), type);
    EXPECT_LE(MaxRelErr(f.low, f.y.to(type)), 0.0) << "low is y rounded to x's dtype";
  }
  EXPECT_EQ(f.dx.scalar_type(), type);
  EXPECT_LE(MaxRelErr(f.dx, a.dx), type == torch::kFloat ? 1e-5 : 8e-3);
  EXPECT_LE(MaxRelErr(f.dr, a.dr), 1e-5);
  EXPECT_LE(MaxRelErr(f.dw, a.dw), 1e-4);
  EXPECT_LE(MaxRelErr(f.db, a.db), 1e-4);
}

TEST(FusedNorm, MatchesAtenOnGpu) {
  if (!FusedOnGpu()) GTEST_SKIP() << "no GPU, or the CUDA kernels are not built";
  for (auto type : {torch::kFloat, torch::kBFloat16, torch::kHalf}) {
    ExpectMatchesAten(type, 4096, 768);  // BERT-base rows
  }
  ExpectMatchesAten(torch::kBFloat16, 1000, 384);  // MiniLM; rows not a multiple of 4 warps
  ExpectMatchesAten(torch::kFloat, 14, 100);       // a row not a multiple of 32 lanes
  ExpectMatchesAten(torch::kFloat, 2, 128);        // bert-tiny
  ExpectMatchesAten(torch::kBFloat16, 30, 1024);   // BERT-large, the longest fused row
  ExpectMatchesAten(torch::kFloat, 6000, 4);       // more rows than the backward's blocks
}

TEST(FusedNorm, DropoutKeepsAndScalesAsAtenDoes) {
  if (!FusedOnGpu()) GTEST_SKIP() << "no GPU, or the CUDA kernels are not built";
  const double p = 0.1;
  const Inputs in = Make(torch::Device(torch::kCUDA, 0), torch::kBFloat16, 2048, 768);
  torch::manual_seed(3);
  const Result f = RunNorm(true, in.x, in.r, in.w, in.b, p, in.gy, in.gl);
  // Where x's gradient is 0 the value was dropped (dz is almost surely non-zero elsewhere).
  const torch::Tensor keep = f.dx.ne(0);
  const double dropped = 1.0 - keep.to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(dropped, p, 0.005);
  // The forward with that mask, through ATen: kept values scaled and rounded to bfloat16.
  const torch::Tensor d = (in.x.to(torch::kFloat) / (1 - p)).to(torch::kBFloat16).to(torch::kFloat);
  const torch::Tensor z = torch::where(keep, d, torch::zeros_like(d)) + in.r;
  EXPECT_LE(MaxRelErr(f.y, torch::layer_norm(z, {768}, in.w, in.b, kEps)), 1e-5);
  // The same seed repeats the mask; another seed does not.
  torch::manual_seed(3);
  const Result again = RunNorm(true, in.x, in.r, in.w, in.b, p, in.gy, in.gl);
  EXPECT_TRUE(torch::equal(again.y, f.y));
  torch::manual_seed(4);
  const Result other = RunNorm(true, in.x, in.r, in.w, in.b, p, in.gy, in.gl);
  EXPECT_FALSE(torch::equal(other.dx.ne(0), keep));
  // Not training: no dropout.
  SetFusedNorm(true);
  const NormOutput eval = DropoutAddLayerNorm(in.x, in.r, in.w, in.b, kEps, p, false);
  const torch::Tensor plain = in.x.to(torch::kFloat) + in.r;
  EXPECT_LE(MaxRelErr(eval.full, torch::layer_norm(plain, {768}, in.w, in.b, kEps)), 1e-5);
}

TEST(FusedNorm, LongRowsAndOtherDtypesTakeTheAtenPath) {
  if (!FusedOnGpu()) GTEST_SKIP() << "no GPU, or the CUDA kernels are not built";
  const Inputs big = Make(torch::Device(torch::kCUDA, 0), torch::kBFloat16, 8, 1056);
  EXPECT_FALSE(DropoutAddLayerNorm(big.x, big.r, big.w, big.b, kEps, 0, false).low.defined());
  const Inputs in = Make(torch::Device(torch::kCUDA, 0), torch::kBFloat16, 8, 64);
  // A bfloat16 residual (and LayerNorm) is not fused: ATen.
  const torch::Tensor r16 = in.r.to(torch::kBFloat16), w16 = in.w.to(torch::kBFloat16),
                      b16 = in.b.to(torch::kBFloat16);
  EXPECT_FALSE(DropoutAddLayerNorm(in.x, r16, w16, b16, kEps, 0, false).low.defined());
  EXPECT_TRUE(DropoutAddLayerNorm(in.x, in.r, in.w, in.b, kEps, 0, false).low.defined());
  SetFusedNorm(false);
  EXPECT_FALSE(DropoutAddLayerNorm(in.x, in.r, in.w, in.b, kEps, 0, false).low.defined());
  SetFusedNorm(true);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
