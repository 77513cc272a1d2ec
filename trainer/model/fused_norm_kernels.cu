// Kernels of trainer/model/fused_norm_kernels.h. One warp per row: each lane holds C chunks of V
// consecutive values of the row in registers (chunk q of the row is lane q % 32's chunk q / 32),
// so the row is read once and written once, with 16-byte loads and stores where V = 8 (rows a
// multiple of 8 long, every pointer 16-byte aligned) and element by element otherwise (V = 1).
// The keep mask is one bit per value, a byte per chunk. The backward keeps per-lane partial
// sums of d gamma and d beta over the rows its warp visits and reduces them per block through
// shared memory; the caller sums the blocks' rows.
#include "trainer/model/fused_norm_kernels.h"

#include <cstdint>
#include <type_traits>

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
constexpr int64_t kMaxBackwardBlocks = 2048;

// Element types by their bits: float, or uint16_t holding a half / bfloat16.
struct Bf16 {};
struct Half {};

template <typename T>
using Storage = std::conditional_t<std::is_same_v<T, float>, float, uint16_t>;

template <typename T>
__device__ __forceinline__ float ToFloat(Storage<T> v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, Bf16>) {
    return __uint_as_float(static_cast<uint32_t>(v) << 16);
  } else {
    return __half2float(__ushort_as_half(v));
  }
}

template <typename T>
__device__ __forceinline__ Storage<T> FromFloat(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, Bf16>) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  } else {
    return __half_as_ushort(__float2half_rn(v));
  }
}

// V values at p (16-byte aligned when V > 1) as floats, and back.
template <typename T, int V>
__device__ __forceinline__ void LoadVec(const Storage<T>* p, float (&out)[V]) {
  if constexpr (V == 1) {
    out[0] = ToFloat<T>(*p);
  } else if constexpr (std::is_same_v<T, float>) {
    static_assert(V % 4 == 0, "float chunks are float4s");
#pragma unroll
    for (int i = 0; i < V / 4; ++i) {
      const float4 f = reinterpret_cast<const float4*>(p)[i];
      out[4 * i] = f.x;
      out[4 * i + 1] = f.y;
      out[4 * i + 2] = f.z;
      out[4 * i + 3] = f.w;
    }
  } else {
    static_assert(V % 8 == 0, "16-bit chunks are uint4s");
#pragma unroll
    for (int i = 0; i < V / 8; ++i) {
      const uint4 u = reinterpret_cast<const uint4*>(p)[i];
      const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        out[8 * i + 2 * j] = ToFloat<T>(static_cast<uint16_t>(w[j] & 0xffffu));
        out[8 * i + 2 * j + 1] = ToFloat<T>(static_cast<uint16_t>(w[j] >> 16));
      }
    }
  }
}

template <typename T, int V>
__device__ __forceinline__ void StoreVec(Storage<T>* p, const float (&in)[V]) {
  if constexpr (V == 1) {
    *p = FromFloat<T>(in[0]);
  } else if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < V / 4; ++i) {
      reinterpret_cast<float4*>(p)[i] =
          make_float4(in[4 * i], in[4 * i + 1], in[4 * i + 2], in[4 * i + 3]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < V / 8; ++i) {
      uint32_t w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        w[j] = static_cast<uint32_t>(FromFloat<T>(in[8 * i + 2 * j])) |
               (static_cast<uint32_t>(FromFloat<T>(in[8 * i + 2 * j + 1])) << 16);
      }
      reinterpret_cast<uint4*>(p)[i] = make_uint4(w[0], w[1], w[2], w[3]);
    }
  }
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v += __shfl_xor_sync(0xffffffffu, v, m);
  return v;
}

// Chunk j of a lane: the row's chunk lane + 32 j, its first column (lane + 32 j) V.
template <int V>
__device__ __forceinline__ int64_t ChunkColumn(int lane, int j) {
  return static_cast<int64_t>(lane + 32 * j) * V;
}

template <typename T, int V, int C>
__global__ void __launch_bounds__(kThreads) ForwardKernel(ForwardArgs a) {
  const int lane = threadIdx.x & 31;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= a.rows) return;  // the whole warp: one row per warp
  const int64_t cols = a.cols;
  const int64_t base = row * cols;
  const Storage<T>* x = static_cast<const Storage<T>*>(a.x) + base;
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
  float z[C][V];
  float sum = 0.f;
  float4 u = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(lane, j);
    const bool valid = c0 < cols;
    float xv[V], rv[V];
    if (valid) {
      LoadVec<T, V>(x + c0, xv);
      LoadVec<float, V>(r + c0, rv);
    }
    uint8_t bits = 0;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (drop && (j * V + e) % 4 == 0) u = curand_uniform4(&state);  // every lane draws alike
      z[j][e] = 0.f;
      if (valid) {
        float v = xv[e];
        if (drop) {
          const int k = (j * V + e) % 4;
          const float draw = k == 0 ? u.x : (k == 1 ? u.y : (k == 2 ? u.z : u.w));
          const bool keep = draw < keep_p;
          v = keep ? ToFloat<T>(FromFloat<T>(v * scale)) : 0.f;
          bits |= static_cast<uint8_t>(keep) << e;
        }
        z[j][e] = v + rv[e];
        sum += z[j][e];
      }
    }
    if (valid && drop && a.keep != nullptr) a.keep[(base + c0) / V] = bits;
  }
  const float mean = WarpSum(sum) / static_cast<float>(cols);
  float sq = 0.f;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    if (ChunkColumn<V>(lane, j) < cols) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float d = z[j][e] - mean;
        sq += d * d;
      }
    }
  }
  const float rstd = rsqrtf(WarpSum(sq) / static_cast<float>(cols) + a.eps);
  Storage<T>* y_low = static_cast<Storage<T>*>(a.y_low);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(lane, j);
    if (c0 >= cols) continue;
    float g[V], b[V], y[V];
    LoadVec<float, V>(a.gamma + c0, g);
    LoadVec<float, V>(a.beta + c0, b);
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = (z[j][e] - mean) * rstd * g[e] + b[e];
    StoreVec<float, V>(a.y + base + c0, y);
    if (y_low != nullptr) StoreVec<T, V>(y_low + base + c0, y);
    if (a.z != nullptr) StoreVec<float, V>(a.z + base + c0, z[j]);
  }
  if (lane == 0 && a.mean != nullptr) {
    a.mean[row] = mean;
    a.rstd[row] = rstd;
  }
}

template <typename T, int V, int C>
__global__ void __launch_bounds__(kThreads) BackwardKernel(BackwardArgs a) {
  extern __shared__ float partial[];  // [kWarps][2][cols]
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x / 32;
  const int64_t cols = a.cols;
  const float inv_cols = 1.f / static_cast<float>(cols);
  const float scale = a.p > 0.f ? 1.f / (1.f - a.p) : 1.f;
  const Storage<T>* dy_low = static_cast<const Storage<T>*>(a.dy_low);
  Storage<T>* dx = static_cast<Storage<T>*>(a.dx);
  float dg[C][V], db[C][V];
#pragma unroll
  for (int j = 0; j < C; ++j) {
#pragma unroll
    for (int e = 0; e < V; ++e) dg[j][e] = db[j][e] = 0.f;
  }
  // One chunk of a row (at column c0): gy = dy + dy_low, xhat, gamma. Each row is read twice,
  // for the sums and then (from cache) for dz, rather than held in registers.
  auto load_chunk = [&](int64_t base, int64_t c0, float mean, float rstd, float(&gy)[V],
                        float(&xhat)[V], float(&gamma)[V]) {
    if (a.dy != nullptr) {
      LoadVec<float, V>(a.dy + base + c0, gy);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) gy[e] = 0.f;
    }
    if (dy_low != nullptr) {
      float low[V];
      LoadVec<T, V>(dy_low + base + c0, low);
#pragma unroll
      for (int e = 0; e < V; ++e) gy[e] += low[e];
    }
    float z[V];
    LoadVec<float, V>(a.z + base + c0, z);
#pragma unroll
    for (int e = 0; e < V; ++e) xhat[e] = (z[e] - mean) * rstd;
    LoadVec<float, V>(a.gamma + c0, gamma);
  };
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp; row < a.rows;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    const int64_t base = row * cols;
    const float mean = a.mean[row], rstd = a.rstd[row];
    float s1 = 0.f, s2 = 0.f;
#pragma unroll
    for (int j = 0; j < C; ++j) {
      const int64_t c0 = ChunkColumn<V>(lane, j);
      if (c0 >= cols) continue;
      float gy[V], xhat[V], gamma[V];
      load_chunk(base, c0, mean, rstd, gy, xhat, gamma);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        dg[j][e] += gy[e] * xhat[e];
        db[j][e] += gy[e];
        const float g = gy[e] * gamma[e];
        s1 += g;
        s2 += g * xhat[e];
      }
    }
    s1 = WarpSum(s1) * inv_cols;
    s2 = WarpSum(s2) * inv_cols;
#pragma unroll
    for (int j = 0; j < C; ++j) {
      const int64_t c0 = ChunkColumn<V>(lane, j);
      if (c0 >= cols) continue;
      float gy[V], xhat[V], gamma[V];
      load_chunk(base, c0, mean, rstd, gy, xhat, gamma);
      const uint8_t bits = a.keep != nullptr ? a.keep[(base + c0) / V] : 0xffu;
      float dz[V], d[V];
#pragma unroll
      for (int e = 0; e < V; ++e) {
        dz[e] = rstd * (gy[e] * gamma[e] - s1 - xhat[e] * s2);
        d[e] = a.keep == nullptr ? dz[e] : (((bits >> e) & 1) ? dz[e] * scale : 0.f);
      }
      StoreVec<float, V>(a.d_residual + base + c0, dz);
      StoreVec<T, V>(dx + base + c0, d);
    }
  }
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(lane, j);
    if (c0 >= cols) continue;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      partial[(warp * 2) * cols + c0 + e] = dg[j][e];
      partial[(warp * 2 + 1) * cols + c0 + e] = db[j][e];
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

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Chunks per lane for V-value chunks: the smallest instantiated count covering the row (0: none).
int Chunks(int64_t cols, int v) {
  static constexpr int kVectorCounts[] = {1, 2, 3, 4};            // 8-value chunks
  static constexpr int kScalarCounts[] = {4, 8, 12, 16, 24, 32};  // single values
  const int64_t need = (cols + 32 * v - 1) / (32 * v);
  if (v == 8) {
    for (int c : kVectorCounts) {
      if (need <= c) return c;
    }
  } else {
    for (int c : kScalarCounts) {
      if (need <= c) return c;
    }
  }
  return 0;
}

template <typename T, int V, int C>
struct ForwardOp {
  static int Run(const ForwardArgs& a, cudaStream_t stream) {
    const int64_t blocks = (a.rows + kWarps - 1) / kWarps;
    ForwardKernel<T, V, C><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    return static_cast<int>(cudaGetLastError());
  }
};

template <typename T, int V, int C>
struct BackwardOp {
  static int Run(const BackwardArgs& a, cudaStream_t stream) {
    const size_t shared = sizeof(float) * 2 * kWarps * static_cast<size_t>(a.cols);
    BackwardKernel<T, V, C>
        <<<static_cast<unsigned>(BackwardBlocks(a.rows)), kThreads, shared, stream>>>(a);
    return static_cast<int>(cudaGetLastError());
  }
};

// Calls Op<T, V, C>::Run(args, stream) for the element type, chunk width and chunk count.
template <template <typename, int, int> class Op, typename Args>
int Dispatch(const Args& a, DType type, bool vector, cudaStream_t stream) {
  auto by_type = [&](auto tag) -> int {
    using T = decltype(tag);
    if (vector) {
      switch (Chunks(a.cols, 8)) {
        case 1:
          return Op<T, 8, 1>::Run(a, stream);
        case 2:
          return Op<T, 8, 2>::Run(a, stream);
        case 3:
          return Op<T, 8, 3>::Run(a, stream);
        case 4:
          return Op<T, 8, 4>::Run(a, stream);
        default:
          return static_cast<int>(cudaErrorInvalidValue);
      }
    }
    switch (Chunks(a.cols, 1)) {
      case 4:
        return Op<T, 1, 4>::Run(a, stream);
      case 8:
        return Op<T, 1, 8>::Run(a, stream);
      case 12:
        return Op<T, 1, 12>::Run(a, stream);
      case 16:
        return Op<T, 1, 16>::Run(a, stream);
      case 24:
        return Op<T, 1, 24>::Run(a, stream);
      case 32:
        return Op<T, 1, 32>::Run(a, stream);
      default:
        return static_cast<int>(cudaErrorInvalidValue);
    }
  };
  switch (type) {
    case DType::kFloat:
      return by_type(float{});
    case DType::kHalf:
      return by_type(Half{});
    case DType::kBFloat16:
      return by_type(Bf16{});
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

// Rows a multiple of 8 long take 8-value chunks (their keep masks a bit per value); they need
// every pointer 16-byte aligned (trainer/model/fused_norm.cc sees to it).
bool Vector(int64_t cols) { return cols % 8 == 0; }

bool AlignedForward(const ForwardArgs& a) {
  return Aligned(a.x) && Aligned(a.residual) && Aligned(a.gamma) && Aligned(a.beta) &&
         Aligned(a.y) && Aligned(a.y_low) && Aligned(a.z);
}

bool AlignedBackward(const BackwardArgs& a) {
  return Aligned(a.dy) && Aligned(a.dy_low) && Aligned(a.z) && Aligned(a.gamma) &&
         Aligned(a.d_residual) && Aligned(a.dx);
}

}  // namespace

uint64_t ForwardRandomPerThread(int64_t cols) {
  return static_cast<uint64_t>(Vector(cols) ? 8 * Chunks(cols, 8) : Chunks(cols, 1));
}

int64_t KeepBytes(int64_t rows, int64_t cols) { return rows * cols / (Vector(cols) ? 8 : 1); }

int64_t BackwardBlocks(int64_t rows) {
  const int64_t blocks = (rows + kWarps - 1) / kWarps;
  return blocks < kMaxBackwardBlocks ? blocks : kMaxBackwardBlocks;
}

int LaunchForward(const ForwardArgs& a, void* stream) {
  if (a.rows <= 0) return 0;
  if (a.cols <= 0 || a.cols > kMaxCols) return static_cast<int>(cudaErrorInvalidValue);
  const bool vector = Vector(a.cols);
  if (vector && !AlignedForward(a)) return static_cast<int>(cudaErrorMisalignedAddress);
  return Dispatch<ForwardOp>(a, a.type, vector, static_cast<cudaStream_t>(stream));
}

int LaunchBackward(const BackwardArgs& a, void* stream) {
  if (a.rows <= 0) return 0;
  if (a.cols <= 0 || a.cols > kMaxCols) return static_cast<int>(cudaErrorInvalidValue);
  const bool vector = Vector(a.cols);
  if (vector && !AlignedBackward(a)) return static_cast<int>(cudaErrorMisalignedAddress);
  return Dispatch<BackwardOp>(a, a.type, vector, static_cast<cudaStream_t>(stream));
}

const char* ErrorString(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

}  // namespace fused_norm_kernels
}  // namespace trainer
}  // namespace tunefleet
