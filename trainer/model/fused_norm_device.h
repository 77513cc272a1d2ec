// Device helpers of trainer/model/fused_norm_kernels.cu, for nvcc only (CUDA built-ins; no Bazel
// target names it, as none names the .cu): element types by their bits (float, or uint16_t
// holding a half / bfloat16) and their conversions to and from float; loads and stores of V
// consecutive values, 16-byte vectors where V > 1; the warp's sum; the first column of a lane's
// chunk of a row.
// Thread-safety: each function works on its thread's registers and the memory it is given;
// WarpSum is called by the whole warp at once.
#ifndef TUNEFLEET_TRAINER_MODEL_FUSED_NORM_DEVICE_H_
#define TUNEFLEET_TRAINER_MODEL_FUSED_NORM_DEVICE_H_

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace tunefleet {
namespace trainer {
namespace fused_norm_kernels {

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

}  // namespace fused_norm_kernels
}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_FUSED_NORM_DEVICE_H_
