// The training objectives of sentence-transformers and transformers, as LibTorch functions of
// embeddings / logits (float tensors, any device; differentiable; stateless, thread-safe):
//   CosineSimilarityLoss:  mean((cos(u_i, v_i) - label_i)^2)               (labels in [0, 1]:
//                          STS scores / 5)
//   MultipleNegativesRankingLoss: cross_entropy(scale * cos(a_i, p_j), i) over the batch: every
//                          other positive (and any extra candidates) is a negative; scale 20
//   SoftmaxLoss (NLI):     cross_entropy(W [u; v; |u - v|] + b, label)    (W, b the classifier)
//   Classification:        cross_entropy(logits, label)
//   CoSENTLoss:            logsumexp(0, scale * (s_j - s_i) for every i, j with label_i >
//                          label_j), s the pair's cosine; scale 20 (Su Jianlin 2022)
//   AnglELoss:             CoSENTLoss with s the pair's normalized angle similarity
//                          (sentence_transformers.util.pairwise_angle_sim; Li & Li 2023)
// All but CoSENT (a single logsumexp) reduce with the mean over the batch, as their reference
// implementations do.
#ifndef TUNEFLEET_TRAINER_TASKS_LOSSES_H_
#define TUNEFLEET_TRAINER_TASKS_LOSSES_H_

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

inline constexpr double kMnrlScale = 20.0;

// u, v: [B, H]; labels: [B] float.
torch::Tensor CosineSimilarityLoss(const torch::Tensor& u, const torch::Tensor& v,
                                   const torch::Tensor& labels);

// anchors: [B, H]; candidates: [C, H] with C >= B, candidates[positive_offset + i] the positive
// of anchors[i] (the rest, e.g. hard negatives or other ranks' positives, are negatives for every
// anchor).
torch::Tensor MultipleNegativesRankingLoss(const torch::Tensor& anchors,
                                           const torch::Tensor& candidates,
                                           double scale = kMnrlScale, int64_t positive_offset = 0);

// scores: [B] similarities of the pairs (cosine or angle); labels: [B] float, any scale (only
// their order counts). As sentence-transformers computes it: the pairs that are not ordered are
// masked out by subtracting 1e12.
torch::Tensor CoSentLoss(const torch::Tensor& scores, const torch::Tensor& labels,
                         double scale = kMnrlScale);
// Row-wise cosine similarity of u and v [B, H] -> [B] (sentence_transformers.util.pairwise_cos_sim:
// F.normalize, eps 1e-12, then the row dot products).
torch::Tensor PairwiseCosine(const torch::Tensor& u, const torch::Tensor& v);
// The absolute normalized angle similarity of u and v [B, H] (H even) -> [B], as
// sentence_transformers.util.pairwise_angle_sim: each row's halves are the real and imaginary
// parts of a complex vector.
torch::Tensor PairwiseAngle(const torch::Tensor& u, const torch::Tensor& v);

// u, v: [B, H]; weight: [K, 3H]; bias: [K]; labels: [B] int64.
torch::Tensor SoftmaxLoss(const torch::Tensor& u, const torch::Tensor& v,
                          const torch::Tensor& weight, const torch::Tensor& bias,
                          const torch::Tensor& labels);

// logits: [B, K]; labels: [B] int64.
torch::Tensor ClassificationLoss(const torch::Tensor& logits, const torch::Tensor& labels);

// Pairwise cosine similarity of the rows of a [N, H] and b [M, H] -> [N, M], as
// sentence_transformers.util.cos_sim (rows normalised by F.normalize, eps 1e-12).
torch::Tensor CosineSimilarityMatrix(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_LOSSES_H_
