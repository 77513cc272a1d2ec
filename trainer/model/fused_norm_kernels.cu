// Kernels of trainer/model/fused_norm_kernels.h. One warp per row: each lane holds C chunks of V
// consecutive values of the row in registers (chunk q of the row is lane q % 32's chunk q / 32),
// so the row is read once and written once, with 16-byte loads and stores where V = 8 (rows a
// multiple of 8 long, every pointer 16-byte aligned) and element by element otherwise (V = 1).
// The keep mask is one bit per value, a byte per chunk. The backward keeps per-lane partial
// sums of d gamma and d beta over the rows its warp visits and reduces them per block through
// shared memory; the caller sums the blocks' rows.
#include "trainer/model/fused_norm_kernels.h"

#include <cstdint>

#include <cuda_runtime.h>
#include <curand_kernel.h>

#include "trainer/model/fused_norm_device.h"

namespace tunefleet {
namespace trainer {
namespace fused_norm_kernels {
namespace {

constexpr int kWarps = 4;  // warps (rows) per block
constexpr int kThreads = 32 * kWarps;
constexpr int64_t kMaxBackwardBlocks = 2048;

// A forward warp's row: its lane, the row, and where the row starts.
struct ForwardRow {
  int lane;
  int64_t row;
  int64_t cols;
  int64_t base;  // row * cols
};

// The forward's dropout of x: whether it drops, its keep probability and scale, and the
// lane's Philox stream (initialised only when it drops).
struct Dropout {
  bool drop;
  float keep_p;
  float scale;
  curandStatePhilox4_32_10_t state;
};

__device__ __forceinline__ void InitDropout(const ForwardArgs& a, const ForwardRow& at,
                                            Dropout& d) {
  d.drop = a.p > 0.f;
  d.keep_p = 1.f - a.p;
  d.scale = d.drop ? 1.f / d.keep_p : 1.f;
  if (d.drop) {
    const uint64_t seed = a.rng.captured && a.rng.seed_ptr != nullptr
                              ? static_cast<uint64_t>(*a.rng.seed_ptr)
                              : a.rng.seed;
    const uint64_t offset =
        a.rng.captured ? static_cast<uint64_t>(*a.rng.offset_ptr + a.rng.intragraph) : a.rng.offset;
    curand_init(seed, static_cast<uint64_t>(at.row) * 32 + at.lane, offset, &d.state);
  }
}

// z = dropout(x) + residual over the lane's chunks (0 past the row's end), with the keep mask's
// bytes stored where asked; returns the lane's sum of z.
template <typename T, int V, int C>
__device__ __forceinline__ float DropoutAddResidual(const ForwardArgs& a, const ForwardRow& at,
                                                    Dropout& d, float (&z)[C][V]) {
  const Storage<T>* x = static_cast<const Storage<T>*>(a.x) + at.base;
  const float* r = a.residual + at.base;
  float sum = 0.f;
  float4 u = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(at.lane, j);
    const bool valid = c0 < at.cols;
    float xv[V], rv[V];
    if (valid) {
      LoadVec<T, V>(x + c0, xv);
      LoadVec<float, V>(r + c0, rv);
    }
    uint8_t bits = 0;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      if (d.drop && (j * V + e) % 4 == 0) u = curand_uniform4(&d.state);  // every lane draws alike
      z[j][e] = 0.f;
      if (valid) {
        float v = xv[e];
        if (d.drop) {
          const int k = (j * V + e) % 4;
          const float draw = k == 0 ? u.x : (k == 1 ? u.y : (k == 2 ? u.z : u.w));
          const bool keep = draw < d.keep_p;
          v = keep ? ToFloat<T>(FromFloat<T>(v * d.scale)) : 0.f;
          bits |= static_cast<uint8_t>(keep) << e;
        }
        z[j][e] = v + rv[e];
        sum += z[j][e];
      }
    }
    if (valid && d.drop && a.keep != nullptr) a.keep[(at.base + c0) / V] = bits;
  }
  return sum;
}

// The row's mean and 1 / standard deviation (eps inside the root), summed over the warp: the
// lane's `sum` of z, then its squared deviations.
template <int V, int C>
__device__ __forceinline__ void RowStats(const float (&z)[C][V], const ForwardRow& at, float sum,
                                         float eps, float& mean, float& rstd) {
  mean = WarpSum(sum) / static_cast<float>(at.cols);
  float sq = 0.f;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    if (ChunkColumn<V>(at.lane, j) < at.cols) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float d = z[j][e] - mean;
        sq += d * d;
      }
    }
  }
  rstd = rsqrtf(WarpSum(sq) / static_cast<float>(at.cols) + eps);
}

// y = (z - mean) rstd gamma + beta over the lane's chunks, stored in fp32, in T (y_low) and z
// itself where asked.
template <typename T, int V, int C>
__device__ __forceinline__ void NormalizeStore(const ForwardArgs& a, const ForwardRow& at,
                                               const float (&z)[C][V], float mean, float rstd) {
  Storage<T>* y_low = static_cast<Storage<T>*>(a.y_low);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(at.lane, j);
    if (c0 >= at.cols) continue;
    float g[V], b[V], y[V];
    LoadVec<float, V>(a.gamma + c0, g);
    LoadVec<float, V>(a.beta + c0, b);
#pragma unroll
    for (int e = 0; e < V; ++e) y[e] = (z[j][e] - mean) * rstd * g[e] + b[e];
    StoreVec<float, V>(a.y + at.base + c0, y);
    if (y_low != nullptr) StoreVec<T, V>(y_low + at.base + c0, y);
    if (a.z != nullptr) StoreVec<float, V>(a.z + at.base + c0, z[j]);
  }
}

template <typename T, int V, int C>
__global__ void __launch_bounds__(kThreads) ForwardKernel(ForwardArgs a) {
  ForwardRow at;
  at.lane = threadIdx.x & 31;
  at.row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (at.row >= a.rows) return;  // the whole warp: one row per warp
  at.cols = a.cols;
  at.base = at.row * at.cols;
  Dropout d;
  InitDropout(a, at, d);
  float z[C][V];
  const float sum = DropoutAddResidual<T, V, C>(a, at, d, z);
  float mean, rstd;
  RowStats<V, C>(z, at, sum, a.eps, mean, rstd);
  NormalizeStore<T, V, C>(a, at, z, mean, rstd);
  if (at.lane == 0 && a.mean != nullptr) {
    a.mean[at.row] = mean;
    a.rstd[at.row] = rstd;
  }
}

// What a backward lane knows of the row its warp visits.
struct BackwardRow {
  int lane;
  int64_t cols;
  float inv_cols;  // 1 / cols
  float scale;     // the dropout's: 1 / (1 - p), 1 without dropout
  int64_t base;    // the row's first value
  float mean;      // the forward's statistics of the row
  float rstd;
};

// One chunk of a row (at column c0): gy = dy + dy_low, xhat, gamma. Each row is read twice,
// for the sums and then (from cache) for dz, rather than held in registers.
template <typename T, int V>
__device__ __forceinline__ void LoadChunk(const BackwardArgs& a, const BackwardRow& r, int64_t c0,
                                          float (&gy)[V], float (&xhat)[V], float (&gamma)[V]) {
  const Storage<T>* dy_low = static_cast<const Storage<T>*>(a.dy_low);
  if (a.dy != nullptr) {
    LoadVec<float, V>(a.dy + r.base + c0, gy);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) gy[e] = 0.f;
  }
  if (dy_low != nullptr) {
    float low[V];
    LoadVec<T, V>(dy_low + r.base + c0, low);
#pragma unroll
    for (int e = 0; e < V; ++e) gy[e] += low[e];
  }
  float z[V];
  LoadVec<float, V>(a.z + r.base + c0, z);
#pragma unroll
  for (int e = 0; e < V; ++e) xhat[e] = (z[e] - r.mean) * r.rstd;
  LoadVec<float, V>(a.gamma + c0, gamma);
}

// The row's first pass: its d gamma and d beta terms added to the lane's partial sums; s1 and
// s2, the means over the row (the warp's sums) of gy gamma and of gy gamma xhat.
template <typename T, int V, int C>
__device__ __forceinline__ void RowSums(const BackwardArgs& a, const BackwardRow& r,
                                        float (&dg)[C][V], float (&db)[C][V], float& s1,
                                        float& s2) {
  s1 = 0.f;
  s2 = 0.f;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(r.lane, j);
    if (c0 >= r.cols) continue;
    float gy[V], xhat[V], gamma[V];
    LoadChunk<T, V>(a, r, c0, gy, xhat, gamma);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      dg[j][e] += gy[e] * xhat[e];
      db[j][e] += gy[e];
      const float g = gy[e] * gamma[e];
      s1 += g;
      s2 += g * xhat[e];
    }
  }
  s1 = WarpSum(s1) * r.inv_cols;
  s2 = WarpSum(s2) * r.inv_cols;
}

// The row's second pass: dz = rstd (gy gamma - s1 - xhat s2) into d_residual, and dx = dz
// through the dropout's keep mask, scaled.
template <typename T, int V, int C>
__device__ __forceinline__ void RowGrads(const BackwardArgs& a, const BackwardRow& r, float s1,
                                         float s2) {
  Storage<T>* dx = static_cast<Storage<T>*>(a.dx);
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(r.lane, j);
    if (c0 >= r.cols) continue;
    float gy[V], xhat[V], gamma[V];
    LoadChunk<T, V>(a, r, c0, gy, xhat, gamma);
    const uint8_t bits = a.keep != nullptr ? a.keep[(r.base + c0) / V] : 0xffu;
    float dz[V], d[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
      dz[e] = r.rstd * (gy[e] * gamma[e] - s1 - xhat[e] * s2);
      d[e] = a.keep == nullptr ? dz[e] : (((bits >> e) & 1) ? dz[e] * r.scale : 0.f);
    }
    StoreVec<float, V>(a.d_residual + r.base + c0, dz);
    StoreVec<T, V>(dx + r.base + c0, d);
  }
}

// The block's d gamma and d beta: each warp's partial sums through shared memory
// ([kWarps][2][cols]), summed over the warps into the block's row of d_gamma_partial and
// d_beta_partial.
template <int V, int C>
__device__ __forceinline__ void BlockPartials(const BackwardArgs& a, float* partial,
                                              const BackwardRow& r, int warp,
                                              const float (&dg)[C][V], const float (&db)[C][V]) {
  const int64_t cols = r.cols;
#pragma unroll
  for (int j = 0; j < C; ++j) {
    const int64_t c0 = ChunkColumn<V>(r.lane, j);
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

template <typename T, int V, int C>
__global__ void __launch_bounds__(kThreads) BackwardKernel(BackwardArgs a) {
  extern __shared__ float partial[];  // [kWarps][2][cols]
  const int warp = threadIdx.x / 32;
  BackwardRow r;
  r.lane = threadIdx.x & 31;
  r.cols = a.cols;
  r.inv_cols = 1.f / static_cast<float>(r.cols);
  r.scale = a.p > 0.f ? 1.f / (1.f - a.p) : 1.f;
  float dg[C][V], db[C][V];
#pragma unroll
  for (int j = 0; j < C; ++j) {
#pragma unroll
    for (int e = 0; e < V; ++e) dg[j][e] = db[j][e] = 0.f;
  }
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + warp; row < a.rows;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    r.base = row * r.cols;
    r.mean = a.mean[row];
    r.rstd = a.rstd[row];
    float s1, s2;
    RowSums<T, V, C>(a, r, dg, db, s1, s2);
    RowGrads<T, V, C>(a, r, s1, s2);
  }
  BlockPartials<V, C>(a, partial, r, warp, dg, db);
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
