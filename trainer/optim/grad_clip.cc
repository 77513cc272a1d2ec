#include "trainer/optim/grad_clip.h"

#include <ATen/ATen.h>

#include "trainer/torch_version.h"

namespace tunefleet {
namespace trainer {

std::vector<torch::Tensor> DefinedGrads(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : params) {
    if (p.grad().defined()) out.push_back(p.grad());
  }
  return out;
}

torch::Tensor TotalGradNorm(const std::vector<torch::Tensor>& grads) {
  torch::NoGradGuard no_grad;
  if (grads.empty()) return torch::zeros({}, torch::kFloat);
  const std::vector<torch::Tensor> norms = at::_foreach_norm(grads, at::Scalar(2.0));
  return torch::stack(norms).to(torch::kFloat).norm(2);
}

void ClipGradsByTotalNorm(std::vector<torch::Tensor>& grads, const torch::Tensor& total,
                          double max_norm) {
  torch::NoGradGuard no_grad;
  if (grads.empty()) return;
  const torch::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
#if TF_TORCH_AT_LEAST(2, 1)
  at::_foreach_mul_(grads, coef);
#else
  for (torch::Tensor& g : grads) g.mul_(coef.to(g.scalar_type()));
#endif
}

void ScaleGrads(std::vector<torch::Tensor>& grads, double factor) {
  torch::NoGradGuard no_grad;
  if (!grads.empty()) at::_foreach_mul_(grads, at::Scalar(factor));
}

}  // namespace trainer
}  // namespace tunefleet
