#include "trainer/model/fused_norm.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include <torch/autograd.h>

#ifdef TUNEFLEET_FUSED_NORM_CUDA
#include <ATen/core/Generator.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "trainer/model/fused_norm_kernels.h"
#endif

namespace tunefleet {
namespace trainer {
namespace {

// -1: not yet read from TUNEFLEET_FUSED_KERNELS; 0 off; 1 on.
std::atomic<int> g_enabled{-1};

NormOutput AtenPath(const torch::Tensor& x, const torch::Tensor& residual,
                    const torch::Tensor& weight, const torch::Tensor& bias, double eps, double p,
                    bool training) {
  NormOutput out;
  out.full =
      torch::layer_norm(torch::dropout(x, p, training) + residual, {x.size(-1)}, weight, bias, eps);
  return out;
}

#ifdef TUNEFLEET_FUSED_NORM_CUDA
namespace k = fused_norm_kernels;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

k::DType KernelType(torch::ScalarType t) {
  return t == torch::kHalf ? k::DType::kHalf
                           : (t == torch::kBFloat16 ? k::DType::kBFloat16 : k::DType::kFloat);
}

// PhiloxCudaState's seed_ is a number in older LibTorch and a {val, ptr} union in newer.
template <typename P>
uint64_t PayloadValue(const P& p) {
  if constexpr (std::is_integral_v<P>) {
    return static_cast<uint64_t>(p);
  } else {
    return p.val;
  }
}
template <typename P>
const int64_t* PayloadPointer(const P& p) {
  if constexpr (std::is_integral_v<P>) {
    return nullptr;
  } else {
    return p.ptr;
  }
}

k::Philox DrawPhilox(const torch::Device& device, uint64_t per_thread) {
  auto* gen = at::check_generator<at::CUDAGeneratorImpl>(
      at::cuda::detail::getDefaultCUDAGenerator(device.index()));
  at::PhiloxCudaState state;
  {
    std::lock_guard<std::mutex> lock(gen->mutex_);
    state = gen->philox_cuda_state(per_thread);
  }
  k::Philox rng;
  rng.captured = state.captured_;
  rng.seed = PayloadValue(state.seed_);
  rng.seed_ptr = state.captured_ ? PayloadPointer(state.seed_) : nullptr;
  if (state.captured_) {
    rng.offset_ptr = state.offset_.ptr;
    rng.intragraph = state.offset_intragraph_;
  } else {
    rng.offset = state.offset_.val;
  }
  return rng;
}

void Check(int error, const char* what) {
  TORCH_CHECK(error == 0, what, " kernel failed: ", k::ErrorString(error));
}

// A contiguous tensor whose data is 16-byte aligned (the kernels' vector loads need it).
torch::Tensor Aligned(const torch::Tensor& t) {
  if (!t.defined()) return t;
  torch::Tensor c = t.contiguous();
  if (reinterpret_cast<uintptr_t>(c.data_ptr()) % 16 != 0) c = c.clone();
  return c;
}

struct Forward {
  torch::Tensor y, low, z, keep, mean, rstd;
};

Forward RunForward(const torch::Tensor& x_in, const torch::Tensor& residual_in,
                   const torch::Tensor& weight, const torch::Tensor& bias, double eps, double p,
                   bool save) {
  const c10::cuda::CUDAGuard guard(x_in.device());
  const torch::Tensor x = Aligned(x_in);
  const torch::Tensor residual = Aligned(residual_in);
  const int64_t cols = x.size(-1);
  const int64_t rows = cols == 0 ? 0 : x.numel() / cols;
  const auto f32 = residual.options();
  Forward f;
  f.y = torch::empty_like(residual);
  if (x.scalar_type() != torch::kFloat) f.low = torch::empty_like(x);
  k::ForwardArgs a;
  a.x = x.data_ptr();
  a.type = KernelType(x.scalar_type());
  a.residual = residual.data_ptr<float>();
  const torch::Tensor w = Aligned(weight), b = Aligned(bias);
  a.gamma = w.data_ptr<float>();
  a.beta = b.data_ptr<float>();
  a.rows = rows;
  a.cols = cols;
  a.eps = static_cast<float>(eps);
  a.p = static_cast<float>(p);
  a.y = f.y.data_ptr<float>();
  a.y_low = f.low.defined() ? f.low.data_ptr() : nullptr;
  if (save) {
    f.z = torch::empty_like(residual);
    f.mean = torch::empty({rows}, f32);
    f.rstd = torch::empty({rows}, f32);
    a.z = f.z.data_ptr<float>();
    a.mean = f.mean.data_ptr<float>();
    a.rstd = f.rstd.data_ptr<float>();
    if (p > 0) {
      f.keep = torch::empty({k::KeepBytes(rows, cols)}, x.options().dtype(torch::kByte));
      a.keep = f.keep.data_ptr<uint8_t>();
    }
  }
  if (p > 0 && rows > 0) a.rng = DrawPhilox(x.device(), k::ForwardRandomPerThread(cols));
  Check(k::LaunchForward(a, c10::cuda::getCurrentCUDAStream(x.device().index()).stream()),
        "fused dropout + add + LayerNorm forward");
  return f;
}

class FusedNormFunction : public torch::autograd::Function<FusedNormFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& residual, const torch::Tensor& weight,
                               const torch::Tensor& bias, double eps, double p) {
    Forward f = RunForward(x, residual, weight, bias, eps, p, /*save=*/true);
    ctx->save_for_backward({f.z, f.mean, f.rstd, f.keep, weight});
    ctx->saved_data["p"] = p;
    ctx->saved_data["x_type"] = static_cast<int64_t>(x.scalar_type());
    if (!f.low.defined()) return {f.y};
    return {f.y, f.low};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& z = saved[0];
    const torch::Tensor& keep = saved[3];
    const torch::Tensor gamma = Aligned(saved[4]);
    const auto x_type = static_cast<torch::ScalarType>(ctx->saved_data["x_type"].toInt());
    const c10::cuda::CUDAGuard guard(z.device());
    const torch::Tensor dy = grads[0].defined() ? Aligned(grads[0].to(torch::kFloat)) : grads[0];
    torch::Tensor dy_low;
    if (grads.size() > 1 && grads[1].defined()) dy_low = Aligned(grads[1].to(x_type));
    const int64_t cols = z.size(-1);
    const int64_t rows = cols == 0 ? 0 : z.numel() / cols;
    const torch::Tensor d_residual = torch::empty_like(z);
    const torch::Tensor dx = torch::empty(z.sizes(), z.options().dtype(x_type));
    const int64_t blocks = k::BackwardBlocks(rows);
    const torch::Tensor d_gamma = torch::empty({blocks, cols}, z.options());
    const torch::Tensor d_beta = torch::empty({blocks, cols}, z.options());
    k::BackwardArgs a;
    a.dy = dy.defined() ? dy.data_ptr<float>() : nullptr;
    a.dy_low = dy_low.defined() ? dy_low.data_ptr() : nullptr;
    a.type = KernelType(x_type);
    a.z = z.data_ptr<float>();
    a.mean = saved[1].data_ptr<float>();
    a.rstd = saved[2].data_ptr<float>();
    a.keep = keep.defined() ? keep.data_ptr<uint8_t>() : nullptr;
    a.gamma = gamma.data_ptr<float>();
    a.rows = rows;
    a.cols = cols;
    a.p = static_cast<float>(ctx->saved_data["p"].toDouble());
    a.d_residual = d_residual.data_ptr<float>();
    a.dx = dx.data_ptr();
    a.d_gamma_partial = d_gamma.data_ptr<float>();
    a.d_beta_partial = d_beta.data_ptr<float>();
    Check(k::LaunchBackward(a, c10::cuda::getCurrentCUDAStream(z.device().index()).stream()),
          "fused dropout + add + LayerNorm backward");
    return {dx, d_residual, d_gamma.sum(0), d_beta.sum(0), torch::Tensor(), torch::Tensor()};
  }
};

bool Fusable(const torch::Tensor& x, const torch::Tensor& residual, const torch::Tensor& weight,
             const torch::Tensor& bias) {
  const auto t = x.scalar_type();
  return x.is_cuda() && x.dim() >= 1 && x.size(-1) > 0 && x.size(-1) <= k::kMaxCols &&
         (t == torch::kFloat || t == torch::kHalf || t == torch::kBFloat16) &&
         residual.sizes() == x.sizes() && residual.device() == x.device() &&
         residual.scalar_type() == torch::kFloat && weight.defined() && bias.defined() &&
         weight.scalar_type() == torch::kFloat && bias.scalar_type() == torch::kFloat &&
         weight.numel() == x.size(-1) && bias.numel() == x.size(-1) &&
         weight.device() == x.device() && bias.device() == x.device();
}
#endif  // TUNEFLEET_FUSED_NORM_CUDA

}  // namespace

bool FusedNormCompiled() {
#ifdef TUNEFLEET_FUSED_NORM_CUDA
  return true;
#else
  return false;
#endif
}

bool FusedNormEnabled() {
  int on = g_enabled.load();
  if (on < 0) {
    const char* env = std::getenv("TUNEFLEET_FUSED_KERNELS");
    on = env != nullptr && std::strcmp(env, "0") == 0 ? 0 : 1;
    g_enabled.store(on);
  }
  return on == 1 && FusedNormCompiled();
}

void SetFusedNorm(bool on) { g_enabled.store(on ? 1 : 0); }

NormOutput DropoutAddLayerNorm(const torch::Tensor& x, const torch::Tensor& residual,
                               const torch::Tensor& weight, const torch::Tensor& bias, double eps,
                               double p, bool training) {
#ifdef TUNEFLEET_FUSED_NORM_CUDA
  if (FusedNormEnabled() && Fusable(x, residual, weight, bias)) {
    const double drop = training ? p : 0.0;
    NormOutput out;
    const bool grad =
        torch::GradMode::is_enabled() && (x.requires_grad() || residual.requires_grad() ||
                                          weight.requires_grad() || bias.requires_grad());
    if (!grad) {
      Forward f = RunForward(x, residual, weight, bias, eps, drop, /*save=*/false);
      out.full = f.y;
      out.low = f.low;
      return out;
    }
    const variable_list y = FusedNormFunction::apply(x, residual, weight, bias, eps, drop);
    out.full = y[0];
    if (y.size() > 1) out.low = y[1];
    return out;
  }
#endif
  return AtenPath(x, residual, weight, bias, eps, p, training);
}

}  // namespace trainer
}  // namespace tunefleet
