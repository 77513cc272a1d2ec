// Kernels of trainer/fused_norm_kernels.h. One warp per row: each lane holds K values of the row
// in registers (columns lane, lane + 32, ...: every load and store of a warp is 32 consecutive
// elements), so the row is read once and written once. The backward keeps per-lane partial sums
// of d gamma and d beta over the rows its warp visits and reduces them per block through shared
// memory; the caller sums the blocks' rows.
#include "trainer/fused_norm_kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>

namespace tunefleet {
namespace trainer {
namespace fused_norm_kernels {
namespace {

constexpr int kWarps = 4;  // warps (rows) per block
constexpr int kThreads = 32 * kWarps;
constexpr int64_t kMaxBackwardBlocks = 512;

__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__device__ __forceinline__ T FromFloat(float v);
template <>
__device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

template <typename T, int K>
__global__ void __launch_bounds__(kThreads) ForwardKernel(ForwardArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= a.rows) return;  // the whole warp: one row per warp
  const int64_t cols = a.cols;
  const int64_t base = row * cols;
  const T* x = static_cast<const T*>(a.x) + base;
  const float* r = a.residual + base;
  const bool drop = a.p > 0.f;
  const float keep_p = 1.f - a.p;
  const float scale = drop ? 1.f / keep_p : 1.f;
  curandStatePhilox4_32_10_t state;
  if (drop) {
    const uint64_t seed = a.rng.captured && a.rng.seed_ptr != nullptr
                              ? static_cast<uint64_t>(*a.rng.seed_ptr)
                              : a.rng.seed;
    const uint64_t offset =
        a.rng.captured ? static_cast<uint64_t>(*a.rng.offset_ptr + a.rng.intragraph) : a.rng.offset;
    curand_init(seed, static_cast<uint64_t>(row) * 32 + lane, offset, &state);
  }
  float z[K];
  float sum = 0.f;
#pragma unroll
  for (int k0 = 0; k0 < K; k0 += 4) {
    float u[4] = {0.f, 0.f, 0.f, 0.f};
    if (drop) {
      const float4 v = curand_uniform4(&state);
      u[0] = v.x;
      u[1] = v.y;
      u[2] = v.z;
      u[3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int k = k0 + j;
      const int64_t c = lane + 32 * k;
      z[k] = 0.f;
      if (c < cols) {
        float v = ToFloat(x[c]);
        if (drop) {
          const bool keep = u[j] < keep_p;
          v = keep ? ToFloat(FromFloat<T>(v * scale)) : 0.f;
          if (a.keep != nullptr) a.keep[base + c] = keep ? 1 : 0;
        }
        z[k] = v + r[c];
        sum += z[k];
      }
    }
  }
  const float mean = WarpSum(sum) / static_cast<float>(cols);
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    if (lane + 32 * k < cols) {
      const float d = z[k] - mean;
      sq += d * d;
    }
  }
  const float rstd = rsqrtf(WarpSum(sq) / static_cast<float>(cols) + a.eps);
  T* y_low = static_cast<T*>(a.y_low);
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t c = lane + 32 * k;
    if (c < cols) {
      const float y = (z[k] - mean) * rstd * a.gamma[c] + a.beta[c];
      a.y[base + c] = y;
      if (y_low != nullptr) y_low[base + c] = FromFloat<T>(y);
      if (a.z != nullptr) a.z[base + c] = z[k];
    }
  }
  if (lane == 0 && a.mean != nullptr) {
    a.mean[row] = mean;
    a.rstd[row] = rstd;
  }
}

template <typename T, int K>
__global__ void __launch_bounds__(kThreads) BackwardKernel(BackwardArgs a) {
  extern __shared__ float partial[];  // [kWarps][2][cols]
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int64_t cols = a.cols;
  const float inv_cols = 1.f / static_cast<float>(cols);
  const float scale = a.p > 0.f ? 1.f / (1.f - a.p) : 1.f;
  const T* dy_low = static_cast<const T*>(a.dy_low);
  T* dx = static_cast<T*>(a.dx);
  float dg[K], db[K];
#pragma unroll
  for (int k = 0; k < K; ++k) dg[k] = db[k] = 0.f;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp; row < a.rows;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t base = row * cols;
    const float mean = a.mean[row], rstd = a.rstd[row];
    float g[K], xhat[K];
    float s1 = 0.f, s2 = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t c = lane + 32 * k;
      g[k] = xhat[k] = 0.f;
      if (c < cols) {
        float gy = a.dy != nullptr ? a.dy[base + c] : 0.f;
        if (dy_low != nullptr) gy += ToFloat(dy_low[base + c]);
        xhat[k] = (a.z[base + c] - mean) * rstd;
        dg[k] += gy * xhat[k];
        db[k] += gy;
        g[k] = gy * a.gamma[c];
        s1 += g[k];
        s2 += g[k] * xhat[k];
      }
    }
    s1 = WarpSum(s1) * inv_cols;
    s2 = WarpSum(s2) * inv_cols;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int64_t c = lane + 32 * k;
      if (c < cols) {
        const float dz = rstd * (g[k] - s1 - xhat[k] * s2);
        a.d_residual[base + c] = dz;
        const float d = a.keep == nullptr ? dz : (a.keep[base + c] ? dz * scale : 0.f);
        dx[base + c] = FromFloat<T>(d);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int64_t c = lane + 32 * k;
    if (c < cols) {
      partial[(warp * 2) * cols + c] = dg[k];
      partial[(warp * 2 + 1) * cols + c] = db[k];
    }
  }
  __syncthreads();
  for (int64_t c = threadIdx.x; c < cols; c += kThreads) {
    float sg = 0.f, sb = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      sg += partial[(w * 2) * cols + c];
      sb += partial[(w * 2 + 1) * cols + c];
    }
    a.d_gamma_partial[blockIdx.x * cols + c] = sg;
    a.d_beta_partial[blockIdx.x * cols + c] = sb;
  }
}

// Values per lane: the smallest instantiated K >= ceil(cols / 32).
int PerLane(int64_t cols) {
  const int64_t need = (cols + 31) / 32;
  for (int k : {4, 8, 12, 16, 24, 32}) {
    if (need <= k) return k;
  }
  return 0;
}

template <typename T, int K>
int Forward(const ForwardArgs& a, cudaStream_t stream) {
  const int64_t blocks = (a.rows + kWarps - 1) / kWarps;
  ForwardKernel<T, K><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  return static_cast<int>(cudaGetLastError());
}

template <typename T, int K>
int Backward(const BackwardArgs& a, cudaStream_t stream) {
  const size_t shared = sizeof(float) * 2 * kWarps * static_cast<size_t>(a.cols);
  BackwardKernel<T, K><<<static_cast<unsigned>(BackwardBlocks(a.rows)), kThreads, shared, stream>>>(a);
  return static_cast<int>(cudaGetLastError());
}

// Calls F<T, K>(args, stream) for the args' element type and row length.
template <template <typename, int> class F, typename Args>
int Dispatch(const Args& a, DType type, cudaStream_t stream) {
  auto by_k = [&](auto tag) -> int {
    using T = decltype(tag);
    switch (PerLane(a.cols)) {
      case 4: return F<T, 4>::Run(a, stream);
      case 8: return F<T, 8>::Run(a, stream);
      case 12: return F<T, 12>::Run(a, stream);
      case 16: return F<T, 16>::Run(a, stream);
      case 24: return F<T, 24>::Run(a, stream);
      case 32: return F<T, 32>::Run(a, stream);
      default: return static_cast<int>(cudaErrorInvalidValue);
    }
  };
  switch (type) {
    case DType::kFloat: return by_k(float{});
    case DType::kHalf: return by_k(__half{});
    case DType::kBFloat16: return by_k(__nv_bfloat16{});
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

template <typename T, int K>
struct ForwardOp {
  static int Run(const ForwardArgs& a, cudaStream_t s) { return Forward<T, K>(a, s); }
};
template <typename T, int K>
struct BackwardOp {
  static int Run(const BackwardArgs& a, cudaStream_t s) { return Backward<T, K>(a, s); }
};

}  // namespace

uint64_t ForwardRandomPerThread(int64_t cols) { return static_cast<uint64_t>(PerLane(cols)); }

int64_t BackwardBlocks(int64_t rows) {
  const int64_t blocks = (rows + kWarps - 1) / kWarps;
  return blocks < kMaxBackwardBlocks ? blocks : kMaxBackwardBlocks;
}

int LaunchForward(const ForwardArgs& a, void* stream) {
  if (a.rows <= 0) return 0;
  if (a.cols <= 0 || a.cols > kMaxCols) return static_cast<int>(cudaErrorInvalidValue);
  return Dispatch<ForwardOp>(a, a.type, static_cast<cudaStream_t>(stream));
}

int LaunchBackward(const BackwardArgs& a, void* stream) {
  if (a.rows <= 0) return 0;
  if (a.cols <= 0 || a.cols > kMaxCols) return static_cast<int>(cudaErrorInvalidValue);
  return Dispatch<BackwardOp>(a, a.type, static_cast<cudaStream_t>(stream));
}

const char* ErrorString(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

}  // namespace fused_norm_kernels
}  // namespace trainer
}  // namespace tunefleet
