// trainer/model/fused_linear.h against torch::linear. On the CPU (CI) Linear is torch::linear, bit
// for bit, in and out of autocast. On a GPU with the cuBLASLt path (ctest on the GPU host), under
// bf16 and fp16 autocast: the output and dX equal ATen's bit for bit (the same addmm and mm); dW
// and db, which the fused path writes in float32 without ATen's round trip through the low
// dtype, are at least as close as ATen's to a float64 reference, on shapes of BERT-base's
// projections and on odd ones; the fallback cases (fp32, no grad, turned off) are torch::linear.
#include "trainer/model/fused_linear.h"

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "trainer/model/autocast.h"

namespace tunefleet {
namespace trainer {
namespace {

struct Result {
  torch::Tensor y, dx, dw, db;
};

// y = Linear(x, w, b) (or torch::linear) under `precision` autocast; back-propagates sum(y * gy).
Result RunLinear(bool fused, Precision precision, const torch::Tensor& x0, const torch::Tensor& w0,
                 const torch::Tensor& b0, const torch::Tensor& gy) {
  auto leaf = [](const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); };
  torch::Tensor x = leaf(x0), w = leaf(w0), b = leaf(b0);
  torch::Tensor y;
  {
    AutocastScope autocast(x0.device().type(), precision);
    y = fused ? Linear(x, w, b) : torch::linear(x, w, b);
  }
  (y.to(torch::kFloat) * gy).sum().backward();
  return {y.detach(), x.grad(), w.grad(), b.grad()};
}

double MaxRelErr(const torch::Tensor& got, const torch::Tensor& want) {
  const torch::Tensor g = got.to(torch::kDouble), w = want.to(torch::kDouble);
  return ((g - w).abs().max() / (w.abs().max() + 1e-30)).item<double>();
}

struct Inputs {
  torch::Tensor x, w, b, gy;
};

// x [batch, seq, in] (float32, as a residual stream is), w [out, in], b [out], gy like y.
Inputs Make(torch::Device device, int64_t batch, int64_t seq, int64_t in, int64_t out) {
  torch::manual_seed(11);
  const auto f32 = torch::TensorOptions().device(device).dtype(torch::kFloat);
  return {torch::randn({batch, seq, in}, f32), torch::randn({out, in}, f32).mul(0.05),
          torch::randn({out}, f32).mul(0.1), torch::randn({batch, seq, out}, f32)};
}

TEST(FusedLinear, CpuIsTorchLinear) {
  const Inputs in = Make(torch::kCPU, 3, 5, 16, 12);
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    const Result got = RunLinear(true, p, in.x, in.w, in.b, in.gy);
    const Result want = RunLinear(false, p, in.x, in.w, in.b, in.gy);
    EXPECT_TRUE(torch::equal(got.y, want.y)) << PrecisionName(p);
    EXPECT_TRUE(torch::equal(got.dx, want.dx)) << PrecisionName(p);
    EXPECT_TRUE(torch::equal(got.dw, want.dw)) << PrecisionName(p);
    EXPECT_TRUE(torch::equal(got.db, want.db)) << PrecisionName(p);
  }
}

bool HaveFusedGpu() { return FusedLinearCompiled() && torch::cuda::is_available(); }

class FusedLinearGpu
    : public ::testing::TestWithParam<std::tuple<Precision, std::vector<int64_t>>> {};

TEST_P(FusedLinearGpu, MatchesAtenAndIsAtLeastAsCloseToFloat64) {
  if (!HaveFusedGpu()) GTEST_SKIP() << "no GPU, or no cuBLASLt path in this build";
  const auto& [precision, dims] = GetParam();
  const Inputs in = Make(torch::kCUDA, dims[0], dims[1], dims[2], dims[3]);
  SetFusedLinear(true);
  const Result got = RunLinear(true, precision, in.x, in.w, in.b, in.gy);
  const Result aten = RunLinear(false, precision, in.x, in.w, in.b, in.gy);
  const std::string where = std::string(PrecisionName(precision)) + " [" +
                            std::to_string(dims[0] * dims[1]) + " x " + std::to_string(dims[2]) +
                            "] -> " + std::to_string(dims[3]);
  ASSERT_EQ(got.y.scalar_type(), aten.y.scalar_type()) << where;
  EXPECT_TRUE(torch::equal(got.y, aten.y)) << where;
  EXPECT_TRUE(torch::equal(got.dx, aten.dx)) << where;
  ASSERT_EQ(got.dw.scalar_type(), torch::kFloat) << where;
  ASSERT_EQ(got.db.scalar_type(), torch::kFloat) << where;

  // The float64 reference of the same rounded operands: dW = gy_low^T x_low, db = sum gy_low,
  // where gy_low is dY as the backward sees it (the low dtype) and x_low the rounded input.
  const torch::ScalarType low = precision == Precision::kBf16 ? torch::kBFloat16 : torch::kHalf;
  const torch::Tensor x64 = in.x.to(low).to(torch::kDouble).reshape({-1, dims[2]});
  const torch::Tensor g64 = in.gy.to(low).to(torch::kDouble).reshape({-1, dims[3]});
  const torch::Tensor dw64 = g64.t().mm(x64), db64 = g64.sum(0);
  const double fused_w = MaxRelErr(got.dw, dw64), aten_w = MaxRelErr(aten.dw, dw64);
  const double fused_b = MaxRelErr(got.db, db64), aten_b = MaxRelErr(aten.db, db64);
  std::cout << where << ": dW error " << fused_w << " (ATen " << aten_w << "), db error " << fused_b
            << " (ATen " << aten_b << ")" << std::endl;
  EXPECT_LE(fused_w, aten_w * 1.01 + 1e-6) << where;
  EXPECT_LE(fused_b, aten_b * 1.01 + 1e-6) << where;
  EXPECT_LT(fused_w, 1e-4) << where;  // float32 accumulation of exact products
  EXPECT_LT(fused_b, 1e-4) << where;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedLinearGpu,
    ::testing::Combine(::testing::Values(Precision::kBf16, Precision::kFp16),
                       ::testing::Values(std::vector<int64_t>{128, 128, 768, 2304},  // fused QKV
                                         std::vector<int64_t>{128, 128, 768, 3072},  // FFN in
                                         std::vector<int64_t>{128, 128, 3072, 768},  // FFN out
                                         std::vector<int64_t>{32, 128, 768, 768},
                                         std::vector<int64_t>{3, 7, 40, 24},  // odd sizes
                                         std::vector<int64_t>{1, 1, 8, 8})));

TEST(FusedLinear, FallsBackToTorchLinearOnTheGpu) {
  if (!HaveFusedGpu()) GTEST_SKIP() << "no GPU, or no cuBLASLt path in this build";
  const Inputs in = Make(torch::kCUDA, 4, 16, 64, 32);
  // No autocast (fp32), turned off, and no grad: torch::linear, bit for bit.
  Result got = RunLinear(true, Precision::kFp32, in.x, in.w, in.b, in.gy);
  Result want = RunLinear(false, Precision::kFp32, in.x, in.w, in.b, in.gy);
  EXPECT_TRUE(torch::equal(got.dw, want.dw));
  EXPECT_TRUE(torch::equal(got.db, want.db));
  SetFusedLinear(false);
  got = RunLinear(true, Precision::kBf16, in.x, in.w, in.b, in.gy);
  want = RunLinear(false, Precision::kBf16, in.x, in.w, in.b, in.gy);
  SetFusedLinear(true);
  EXPECT_TRUE(torch::equal(got.dw, want.dw));
  EXPECT_TRUE(torch::equal(got.db, want.db));
  torch::NoGradGuard no_grad;
  AutocastScope autocast(torch::kCUDA, Precision::kBf16);
  EXPECT_TRUE(torch::equal(Linear(in.x, in.w, in.b), torch::linear(in.x, in.w, in.b)));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
