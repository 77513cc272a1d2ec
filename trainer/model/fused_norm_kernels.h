// CUDA kernels of trainer/model/fused_norm.h: dropout + residual add + LayerNorm in one pass over
// each row, forward and backward. Plain C++ (no LibTorch), so the .cu compiles with nvcc alone;
// built only by the CMake GPU build (TUNEFLEET_FUSED_NORM_CUDA), the Bazel CPU build never includes
// it.
//
// Forward, per row of `cols` values, with x of type T (float, half or bfloat16):
//   d = keep ? T(x * 1/(1-p)) : 0          (dropout rounded to T, as ATen's dropout on T is)
//   z = float(d) + residual                 (float)
//   y = (z - mean(z)) * rsqrt(var(z) + eps) * gamma + beta   (float; var biased)
// and optionally y_low = T(y) (the copy the next matmul reads under autocast), z, the keep mask
// and mean / rstd (float, per row) for the backward.
// Backward, from dy (float) and dy_low (T), either may be absent:
//   g = dy + float(dy_low); dz = rstd * (g*gamma - mean(g*gamma) - xhat * mean(g*gamma*xhat))
//   d_residual = dz (float), dx = T(keep ? dz / (1-p) : 0),
//   per-block partial sums of g*xhat (d gamma) and g (d beta), [blocks, cols] each.
// Rows are up to kMaxCols values. Launchers return a cudaError_t as int (0: launched), and
// cudaErrorMisalignedAddress when rows are a multiple of 8 long and a pointer is not 16-byte
// aligned.
#ifndef TUNEFLEET_TRAINER_MODEL_FUSED_NORM_KERNELS_H_
#define TUNEFLEET_TRAINER_MODEL_FUSED_NORM_KERNELS_H_

#include <cstdint>

namespace tunefleet {
namespace trainer {
namespace fused_norm_kernels {

constexpr int64_t kMaxCols = 1024;

enum class DType { kFloat, kHalf, kBFloat16 };

// ATen's PhiloxCudaState, unpacked on the host: during CUDA graph capture the offset (and the
// seed, where seed_ptr is set) are read in the kernel from offset_ptr (+ intragraph) and
// seed_ptr, as ATen's kernels do.
struct Philox {
  uint64_t seed = 0;
  uint64_t offset = 0;
  const int64_t* seed_ptr = nullptr;
  const int64_t* offset_ptr = nullptr;
  uint32_t intragraph = 0;
  bool captured = false;
};

struct ForwardArgs {
  const void* x = nullptr;  // T [rows, cols]
  DType type = DType::kFloat;
  const float* residual = nullptr;  // [rows, cols]
  const float* gamma = nullptr;     // [cols]
  const float* beta = nullptr;      // [cols]
  int64_t rows = 0, cols = 0;
  float eps = 1e-12f;
  float p = 0;              // dropout probability; 0: no dropout, no mask, no random numbers
  Philox rng;               // used when p > 0
  float* y = nullptr;       // [rows, cols]
  void* y_low = nullptr;    // T [rows, cols] or null
  float* z = nullptr;       // saved for the backward, or null
  uint8_t* keep = nullptr;  // KeepBytes(rows, cols) when p > 0 and saving, else null
  float* mean = nullptr;    // [rows] or null (with z)
  float* rstd = nullptr;    // [rows] or null (with z)
};

struct BackwardArgs {
  const float* dy = nullptr;     // [rows, cols] or null
  const void* dy_low = nullptr;  // T [rows, cols] or null
  DType type = DType::kFloat;
  const float* z = nullptr;
  const float* mean = nullptr;
  const float* rstd = nullptr;
  const uint8_t* keep = nullptr;  // null: no dropout
  const float* gamma = nullptr;
  int64_t rows = 0, cols = 0;
  float p = 0;
  float* d_residual = nullptr;       // [rows, cols]
  void* dx = nullptr;                // T [rows, cols]
  float* d_gamma_partial = nullptr;  // [BackwardBlocks(rows), cols]
  float* d_beta_partial = nullptr;   // [BackwardBlocks(rows), cols]
};

// Random 32-bit values each thread of the forward draws (the generator's offset increment).
uint64_t ForwardRandomPerThread(int64_t cols);
// Bytes of the keep mask: a bit per value where rows are a multiple of 8 long (those rows also
// need every pointer 16-byte aligned), else a byte per value.
int64_t KeepBytes(int64_t rows, int64_t cols);
// Blocks of the backward kernel, the rows of its partial sums.
int64_t BackwardBlocks(int64_t rows);

int LaunchForward(const ForwardArgs& args, void* stream);
int LaunchBackward(const BackwardArgs& args, void* stream);
const char* ErrorString(int error);

}  // namespace fused_norm_kernels
}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_FUSED_NORM_KERNELS_H_
