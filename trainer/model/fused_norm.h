// LayerNorm(dropout(x) + residual): BERT's "dense -> dropout -> + residual -> LayerNorm" after the
// dense layer, as one CUDA kernel each way where the CMake GPU build compiled them
// (trainer/model/fused_norm_kernels.cu), else as the ATen operations transformers runs.
//
// The fused path keeps the ATen path's numbers: the dropped-out x is rounded to x's dtype before
// the float add (as ATen's dropout on a bf16 tensor is), the LayerNorm runs in float (as autocast
// runs layer_norm), and `low` is the output rounded to x's dtype: the copy the next matmul would
// make under autocast, written in the same pass, so that cast is gone. Gradients reaching `full`
// and `low` are summed in the backward. The dropout draws its own random numbers from the
// device's default generator (graph-safe, as ATen's are), so its mask differs from ATen's
// dropout's for the same seed; with the same seed the fused path repeats itself.
//
// The fused path runs when: the kernels were compiled in, not turned off (SetFusedNorm(false),
// or TUNEFLEET_FUSED_KERNELS=0 in the environment), x is on a CUDA device, rows are at most 1024
// values, and residual, weight and bias are float32 (x float32, float16 or bfloat16). Otherwise
// the ATen operations run and `low` is undefined.
// Thread-safety: SetFusedNorm is global; call it before training starts.
#ifndef TUNEFLEET_TRAINER_MODEL_FUSED_NORM_H_
#define TUNEFLEET_TRAINER_MODEL_FUSED_NORM_H_

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

struct NormOutput {
  torch::Tensor full;  // float32 on the fused path; the ATen path's dtype otherwise
  torch::Tensor
      low;  // full in x's dtype when that differs from float32 (fused path), else undefined
  // What a following matmul should read.
  const torch::Tensor& for_matmul() const { return low.defined() ? low : full; }
};

// x: [..., H] (a dense layer's output); residual: the same shape. `training` applies dropout p.
NormOutput DropoutAddLayerNorm(const torch::Tensor& x, const torch::Tensor& residual,
                               const torch::Tensor& weight, const torch::Tensor& bias, double eps,
                               double p, bool training);

// Whether this build has the CUDA kernels.
bool FusedNormCompiled();
// Whether the fused path may run (compiled, and not turned off).
bool FusedNormEnabled();
void SetFusedNorm(bool on);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_FUSED_NORM_H_
