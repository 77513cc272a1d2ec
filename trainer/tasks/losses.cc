#include "trainer/tasks/losses.h"

#include <vector>

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

torch::Tensor CoSentLoss(const torch::Tensor& scores, const torch::Tensor& labels, double scale) {
  const torch::Tensor s = scores * scale;
  const torch::Tensor diff = s.unsqueeze(1) - s.unsqueeze(0);  // s_i - s_j
  const torch::Tensor l = labels.to(s.dtype());
  const torch::Tensor ordered = (l.unsqueeze(1) < l.unsqueeze(0)).to(s.dtype());
  const torch::Tensor masked = diff - (1 - ordered) * 1e12;
  return torch::logsumexp(torch::cat({torch::zeros({1}, s.options()), masked.reshape({-1})}), 0);
}

torch::Tensor PairwiseCosine(const torch::Tensor& u, const torch::Tensor& v) {
  const torch::Tensor un = F::normalize(u, F::NormalizeFuncOptions().p(2).dim(1));
  const torch::Tensor vn = F::normalize(v, F::NormalizeFuncOptions().p(2).dim(1));
  return (un * vn).sum(1);
}

torch::Tensor PairwiseAngle(const torch::Tensor& u, const torch::Tensor& v) {
  const std::vector<torch::Tensor> x = torch::chunk(u, 2, 1), y = torch::chunk(v, 2, 1);
  const torch::Tensor &a = x[0], &b = x[1], &c = y[0], &d = y[1];
  const torch::Tensor z = (c.pow(2) + d.pow(2)).sum(1, /*keepdim=*/true);
  torch::Tensor re = (a * c + b * d) / z;
  torch::Tensor im = (b * c - a * d) / z;
  const torch::Tensor dz = (a.pow(2) + b.pow(2)).sum(1, true).pow(0.5);
  const torch::Tensor dw = (c.pow(2) + d.pow(2)).sum(1, true).pow(0.5);
  re = re / (dz / dw);
  im = im / (dz / dw);
  return torch::abs(torch::cat({re, im}, 1).sum(1));
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
