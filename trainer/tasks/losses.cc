#include "trainer/tasks/losses.h"

#include <torch/nn/functional/distance.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/functional/normalization.h>

namespace tunefleet {
namespace trainer {

namespace F = torch::nn::functional;

torch::Tensor CosineSimilarityLoss(const torch::Tensor& u, const torch::Tensor& v,
                                   const torch::Tensor& labels) {
  // torch.cosine_similarity(u, v) (eps 1e-8), then MSELoss.
  const torch::Tensor cos = F::cosine_similarity(u, v, F::CosineSimilarityFuncOptions().dim(1));
  return F::mse_loss(cos, labels.to(cos.dtype()));
}

torch::Tensor CosineSimilarityMatrix(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor an = F::normalize(a, F::NormalizeFuncOptions().p(2).dim(1));
  const torch::Tensor bn = F::normalize(b, F::NormalizeFuncOptions().p(2).dim(1));
  return torch::mm(an, bn.transpose(0, 1));
}

torch::Tensor MultipleNegativesRankingLoss(const torch::Tensor& anchors,
                                           const torch::Tensor& candidates, double scale,
                                           int64_t positive_offset) {
  const torch::Tensor scores = CosineSimilarityMatrix(anchors, candidates) * scale;
  const torch::Tensor labels =
      torch::arange(positive_offset, positive_offset + anchors.size(0),
                    torch::TensorOptions().dtype(torch::kLong).device(anchors.device()));
  return F::cross_entropy(scores, labels);
}

torch::Tensor SoftmaxLoss(const torch::Tensor& u, const torch::Tensor& v,
                          const torch::Tensor& weight, const torch::Tensor& bias,
                          const torch::Tensor& labels) {
  const torch::Tensor features = torch::cat({u, v, torch::abs(u - v)}, 1);
  return F::cross_entropy(F::linear(features, weight, bias), labels);
}

torch::Tensor ClassificationLoss(const torch::Tensor& logits, const torch::Tensor& labels) {
  return F::cross_entropy(logits, labels);
}

}  // namespace trainer
}  // namespace tunefleet
