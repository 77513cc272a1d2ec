// y = x W^T + b, as torch::linear under autocast, with a backward that computes the bias gradient
// inside the weight gradient's GEMM (cuBLASLt's BGRADB epilogue) and writes both gradients in
// float32, the parameters' dtype, where the CMake GPU build has cuBLASLt
// (TUNEFLEET_FUSED_LINEAR_CUDA).
//
// Why: ATen's linear backward under autocast computes db as a separate column sum over every
// token of dY, re-reading dY from memory, and rounds dW and db to bf16 before autocast's cast
// back to float32. In a BERT-base batch-128 step on an H100 (Nsight Compute, stop 19) the sums
// took 2.0 ms of 28 and the casts 0.4 ms.
//
// Numbers: the forward is autocast's (x, W and b rounded to the autocast dtype, one addmm) and dX
// is ATen's (dY W in the autocast dtype). dW = dY^T x and db = sum of dY are accumulated in
// float32 as ATen's are, but written in float32 without the round trip through bf16: a little
// more precise than ATen, so not bit-identical to it.
//
// The fused path runs when: compiled in, not turned off (SetFusedLinear(false), or
// TUNEFLEET_FUSED_KERNELS=0 in the environment), autocast is on for CUDA in bf16 or fp16, x is a
// CUDA tensor, weight and bias are float32 and one of them requires grad, and grad mode is on.
// Otherwise torch::linear runs. If cuBLASLt has no kernel for a shape, that backward falls back
// to ATen's operations (said once on stderr).
// Thread-safety: SetFusedLinear is global; call it before training starts. Linear is safe to call
// from several threads.
#ifndef TUNEFLEET_TRAINER_MODEL_FUSED_LINEAR_H_
#define TUNEFLEET_TRAINER_MODEL_FUSED_LINEAR_H_

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

// x [..., in], weight [out, in], bias [out] -> [..., out].
torch::Tensor Linear(const torch::Tensor& x, const torch::Tensor& weight,
                     const torch::Tensor& bias);

// Whether this build has the cuBLASLt path.
bool FusedLinearCompiled();
// Whether the fused path may run (compiled, and not turned off).
bool FusedLinearEnabled();
void SetFusedLinear(bool on);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_FUSED_LINEAR_H_
