// Gradient norm and clipping with torch.nn.utils.clip_grad_norm_'s arithmetic (foreach path):
//   total = || (||g_1||_2, ..., ||g_n||_2) ||_2   over the parameters that have a gradient
//   coef  = min(max_norm / (total + 1e-6), 1);  g_i <- g_i * coef
// Neither function synchronizes with the device: the norm stays a tensor until someone reads it.
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_OPTIM_GRAD_CLIP_H_
#define TUNEFLEET_TRAINER_OPTIM_GRAD_CLIP_H_

#include <vector>

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

// The gradients of `params` that are defined.
std::vector<torch::Tensor> DefinedGrads(const std::vector<torch::Tensor>& params);

// The total 2-norm of `grads` as a float32 scalar tensor on their device (0 when empty).
torch::Tensor TotalGradNorm(const std::vector<torch::Tensor>& grads);

// Scales `grads` in place so that their total norm is at most `max_norm`, given their total
// norm `total` (TotalGradNorm's result). A non-finite total makes them non-finite, as in torch.
void ClipGradsByTotalNorm(std::vector<torch::Tensor>& grads, const torch::Tensor& total,
                          double max_norm);

// Multiplies `grads` in place by `factor`.
void ScaleGrads(std::vector<torch::Tensor>& grads, double factor);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_OPTIM_GRAD_CLIP_H_
