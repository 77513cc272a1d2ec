#include "trainer/model/fused_linear.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include <torch/autograd.h>

#include "trainer/model/autocast.h"

#ifdef TUNEFLEET_FUSED_LINEAR_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublasLt.h>

#include <iostream>
#include <map>
#include <mutex>
#include <tuple>
#endif

namespace tunefleet {
namespace trainer {
namespace {

// -1: not yet read from TUNEFLEET_FUSED_KERNELS; 0 off; 1 on.
std::atomic<int> g_enabled{-1};

#ifdef TUNEFLEET_FUSED_LINEAR_CUDA
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// cuBLASLt's workspace for the weight-gradient GEMM (its split-K kernels use one), from the
// caching allocator, so that a CUDA graph capture takes it from the graph's pool.
constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;

// Frees cuBLASLt descriptors at scope exit.
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descriptors() {
    if (pref != nullptr) cublasLtMatmulPreferenceDestroy(pref);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) cublasLtMatmulDescDestroy(op);
  }
};

// The heuristic's algorithm per (tokens, in, out, dtype, device), or none (no kernel: ATen's way).
struct AlgoKey {
  int64_t tokens, in, out;
  int dtype, device;
  bool operator<(const AlgoKey& o) const {
    return std::tie(tokens, in, out, dtype, device) <
           std::tie(o.tokens, o.in, o.out, o.dtype, o.device);
  }
};
struct AlgoEntry {
  bool found = false;
  cublasLtMatmulAlgo_t algo;
};
std::mutex g_algo_mu;
std::map<AlgoKey, AlgoEntry> g_algos;  // guarded by g_algo_mu

#define TF_LT(call)                                    \
  do {                                                 \
    if ((call) != CUBLAS_STATUS_SUCCESS) return false; \
  } while (0)

// dW [out, in] (float32) = dY^T x and db [out] (float32) = the column sums of dY, in one cuBLASLt
// GEMM with the BGRADB epilogue. x [tokens, in] and dy [tokens, out] are row-major, contiguous,
// in bf16 or fp16. Row-major x is column-major [in x tokens] (cuBLASLt's A, not transposed);
// row-major dY is column-major [out x tokens] (B, transposed to [tokens x out]); D = A B is
// column-major [in x out], which is row-major dW. BGRADB sums B over the GEMM's k (the tokens).
// False when cuBLASLt has no kernel for it.
bool WeightAndBiasGrad(const torch::Tensor& x, const torch::Tensor& dy, torch::Tensor& dw,
                       torch::Tensor& db) {
  const int64_t tokens = x.size(0), in = x.size(1), out = dy.size(1);
  const cudaDataType_t ab = x.scalar_type() == torch::kBFloat16 ? CUDA_R_16BF : CUDA_R_16F;
  Descriptors d;
  TF_LT(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_T;
  TF_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)));
  TF_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)));
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BGRADB;
  TF_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof(epilogue)));
  void* bias = db.data_ptr();
  TF_LT(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  const cudaDataType_t bias_type = CUDA_R_32F;
  TF_LT(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                       sizeof(bias_type)));
  TF_LT(cublasLtMatrixLayoutCreate(&d.a, ab, in, tokens, in));
  TF_LT(cublasLtMatrixLayoutCreate(&d.b, ab, out, tokens, out));
  TF_LT(cublasLtMatrixLayoutCreate(&d.d, CUDA_R_32F, in, out, in));

  cublasLtHandle_t handle = at::cuda::getCurrentCUDABlasLtHandle();
  const AlgoKey key{tokens, in, out, static_cast<int>(ab), x.device().index()};
  AlgoEntry entry;
  {
    std::lock_guard<std::mutex> lock(g_algo_mu);
    auto it = g_algos.find(key);
    if (it != g_algos.end()) {
      entry = it->second;
    } else {
      TF_LT(cublasLtMatmulPreferenceCreate(&d.pref));
      const uint64_t workspace = kWorkspaceBytes;
      TF_LT(cublasLtMatmulPreferenceSetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace, sizeof(workspace)));
      cublasLtMatmulHeuristicResult_t result = {};
      int found = 0;
      const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(handle, d.op, d.a, d.b, d.d, d.d,
                                                              d.pref, 1, &result, &found);
      entry.found = s == CUBLAS_STATUS_SUCCESS && found > 0;
      if (entry.found) entry.algo = result.algo;
      g_algos[key] = entry;
    }
  }
  if (!entry.found) return false;
  const torch::Tensor workspace = torch::empty({kWorkspaceBytes}, x.options().dtype(torch::kUInt8));
  const float alpha = 1.0f, beta = 0.0f;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream(x.device().index()).stream();
  TF_LT(cublasLtMatmul(handle, d.op, &alpha, x.data_ptr(), d.a, dy.data_ptr(), d.b, &beta,
                       dw.data_ptr(), d.d, dw.data_ptr(), d.d, &entry.algo, workspace.data_ptr(),
                       kWorkspaceBytes, stream));
  return true;
}
#undef TF_LT

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias,
                               torch::ScalarType dtype) {
    const int64_t in = weight.size(1), out = weight.size(0);
    const torch::Tensor x2 = x.to(dtype).reshape({-1, in}).contiguous();
    const torch::Tensor w = weight.to(dtype);
    torch::Tensor y = at::addmm(bias.to(dtype), x2, w.t());
    ctx->save_for_backward({x2, w});
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = out;
    ctx->saved_data["x_shape"] = x.sizes().vec();
    return y.view(shape);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor& x2 = saved[0];
    const torch::Tensor& w = saved[1];
    const int64_t out = w.size(0), in = w.size(1);
    const c10::cuda::CUDAGuard guard(x2.device());
    const torch::Tensor dy = grads[0].to(w.scalar_type()).reshape({-1, out}).contiguous();
    torch::Tensor dx;
    if (ctx->needs_input_grad(0)) dx = dy.mm(w).view(ctx->saved_data["x_shape"].toIntVector());
    torch::Tensor dw, db;
    if (ctx->needs_input_grad(1) || ctx->needs_input_grad(2)) {
      dw = torch::empty({out, in}, x2.options().dtype(torch::kFloat));
      db = torch::empty({out}, x2.options().dtype(torch::kFloat));
      if (!WeightAndBiasGrad(x2, dy, dw, db)) {
        static std::once_flag said;
        std::call_once(said, [&] {
          std::cerr << "fused_linear: cuBLASLt has no bias-gradient kernel for [" << x2.size(0)
                    << " x " << in << "] -> " << out << "; ATen computes these gradients"
                    << std::endl;
        });
        dw = dy.t().mm(x2).to(torch::kFloat);
        db = dy.sum(0, /*keepdim=*/false, torch::kFloat);
      }
    }
    return {dx, dw, db, torch::Tensor()};
  }
};

bool Fusable(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  return x.is_cuda() && x.dim() >= 1 && weight.dim() == 2 && bias.defined() && bias.dim() == 1 &&
         x.size(-1) == weight.size(1) && bias.size(0) == weight.size(0) && x.numel() > 0 &&
         weight.scalar_type() == torch::kFloat && bias.scalar_type() == torch::kFloat &&
         weight.device() == x.device() && bias.device() == x.device() &&
         torch::GradMode::is_enabled() && (weight.requires_grad() || bias.requires_grad());
}
#endif  // TUNEFLEET_FUSED_LINEAR_CUDA

}  // namespace

bool FusedLinearCompiled() {
#ifdef TUNEFLEET_FUSED_LINEAR_CUDA
  return true;
#else
  return false;
#endif
}

bool FusedLinearEnabled() {
  int on = g_enabled.load();
  if (on < 0) {
    const char* env = std::getenv("TUNEFLEET_FUSED_KERNELS");
    on = env != nullptr && std::strcmp(env, "0") == 0 ? 0 : 1;
    g_enabled.store(on);
  }
  return on == 1 && FusedLinearCompiled();
}

void SetFusedLinear(bool on) { g_enabled.store(on ? 1 : 0); }

torch::Tensor Linear(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias) {
#ifdef TUNEFLEET_FUSED_LINEAR_CUDA
  if (FusedLinearEnabled() && Fusable(x, weight, bias)) {
    const Precision p = CurrentAutocast(torch::kCUDA);
    if (p != Precision::kFp32) {
      return LinearFunction::apply(x, weight, bias,
                                   p == Precision::kBf16 ? torch::kBFloat16 : torch::kHalf);
    }
  }
#endif
  return torch::linear(x, weight, bias);
}

}  // namespace trainer
}  // namespace tunefleet
