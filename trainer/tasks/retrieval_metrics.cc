#include "trainer/tasks/retrieval_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <torch/nn/functional/normalization.h>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr int64_t kAccuracyAt[] = {1, 3, 5, 10};
constexpr int64_t kPrecisionRecallAt[] = {1, 3, 5, 10};
constexpr int64_t kMrrAt = 10;
constexpr int64_t kNdcgAt = 10;
constexpr int64_t kMapAt = 100;

// numpy's pairwise summation of doubles (numpy/_core/src/umath/loops_utils.h.src,
// pairwise_sum_DOUBLE): under 8 values a plain loop; up to 128, eight accumulators then the rest;
// above, split in two at a multiple of 8.
double PairwiseSum(const double* a, int64_t n) {
  if (n < 8) {
    double res = 0.;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

// np.mean of a float64 list: add.reduce from 0 (the iterator hands the loop at most 8192 values
// at a time), divided by the count.
double NumpyMean(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  const int64_t n = static_cast<int64_t>(v.size());
  double sum = 0.0;
  for (int64_t begin = 0; begin < n; begin += 8192) {
    sum += PairwiseSum(v.data() + begin, std::min<int64_t>(8192, n - begin));
  }
  return sum / static_cast<double>(n);
}

// compute_dcg_at_k: sum of relevances[i] / log2(i + 2) over the first min(len, k).
double Dcg(const std::vector<int>& relevances, int64_t k) {
  double dcg = 0;
  const int64_t n = std::min<int64_t>(static_cast<int64_t>(relevances.size()), k);
  for (int64_t i = 0; i < n; ++i) dcg += relevances[i] / std::log2(static_cast<double>(i + 2));
  return dcg;
}

float SortKey(float score) {
  return std::isnan(score) ? -std::numeric_limits<float>::infinity() : score;
}

}  // namespace

std::map<std::string, double> RetrievalMetricsFromHits(
    const std::vector<std::vector<RetrievalHit>>& hits,
    const std::vector<std::vector<int64_t>>& relevant, const std::string& suffix) {
  constexpr size_t kA = std::size(kAccuracyAt), kP = std::size(kPrecisionRecallAt);
  int64_t queries = 0;
  int64_t hits_at[kA] = {};
  std::vector<double> precision[kP], recall[kP], ndcg, average_precision;
  double mrr = 0;
  for (size_t q = 0; q < hits.size() && q < relevant.size(); ++q) {
    std::vector<int64_t> rel = relevant[q];  // a set, as the evaluator's relevant_docs are
    std::sort(rel.begin(), rel.end());
    rel.erase(std::unique(rel.begin(), rel.end()), rel.end());
    if (rel.empty()) continue;
    ++queries;
    const double num_relevant = static_cast<double>(rel.size());
    const std::vector<RetrievalHit>& top = hits[q];
    std::vector<int> is_relevant(top.size());
    for (size_t i = 0; i < top.size(); ++i) {
      is_relevant[i] = std::binary_search(rel.begin(), rel.end(), top[i].index) ? 1 : 0;
    }
    auto first = [&](int64_t k) { return std::min<int64_t>(k, static_cast<int64_t>(top.size())); };
    for (size_t j = 0; j < kA; ++j) {
      for (int64_t i = 0; i < first(kAccuracyAt[j]); ++i) {
        if (is_relevant[i]) {
          ++hits_at[j];
          break;
        }
      }
    }
    for (size_t j = 0; j < kP; ++j) {
      int64_t correct = 0;
      for (int64_t i = 0; i < first(kPrecisionRecallAt[j]); ++i) correct += is_relevant[i];
      precision[j].push_back(static_cast<double>(correct) /
                             static_cast<double>(kPrecisionRecallAt[j]));
      recall[j].push_back(static_cast<double>(correct) / num_relevant);
    }
    for (int64_t i = 0; i < first(kMrrAt); ++i) {
      if (is_relevant[i]) {
        mrr += 1.0 / static_cast<double>(i + 1);
        break;
      }
    }
    {
      const std::vector<int> predicted(is_relevant.begin(), is_relevant.begin() + first(kNdcgAt));
      const std::vector<int> ideal(rel.size(), 1);
      ndcg.push_back(Dcg(predicted, kNdcgAt) / Dcg(ideal, kNdcgAt));
    }
    {
      int64_t correct = 0;
      double sum_precisions = 0;
      for (int64_t i = 0; i < first(kMapAt); ++i) {
        if (is_relevant[i]) {
          ++correct;
          sum_precisions += static_cast<double>(correct) / static_cast<double>(i + 1);
        }
      }
      average_precision.push_back(sum_precisions /
                                  static_cast<double>(std::min<int64_t>(kMapAt, rel.size())));
    }
  }
  std::map<std::string, double> out;
  const double n = static_cast<double>(queries);
  for (size_t j = 0; j < kA; ++j) {
    out[absl::StrCat("eval/accuracy@", kAccuracyAt[j], suffix)] =
        static_cast<double>(hits_at[j]) / n;
  }
  for (size_t j = 0; j < kP; ++j) {
    out[absl::StrCat("eval/precision@", kPrecisionRecallAt[j], suffix)] = NumpyMean(precision[j]);
    out[absl::StrCat("eval/recall@", kPrecisionRecallAt[j], suffix)] = NumpyMean(recall[j]);
  }
  out[absl::StrCat("eval/mrr@", kMrrAt, suffix)] = mrr / n;
  out[absl::StrCat("eval/ndcg@", kNdcgAt, suffix)] = NumpyMean(ndcg);
  out[absl::StrCat("eval/map@", kMapAt, suffix)] = NumpyMean(average_precision);
  return out;
}

std::vector<std::vector<RetrievalHit>> TopRetrievalHits(const torch::Tensor& queries,
                                                        const torch::Tensor& corpus, int64_t k) {
  const int64_t num_queries = queries.size(0), num_corpus = corpus.size(0);
  std::vector<std::vector<RetrievalHit>> out(num_queries);
  if (num_queries == 0 || num_corpus == 0 || k <= 0) return out;
  k = std::min(k, num_corpus);
  torch::NoGradGuard no_grad;
  namespace F = torch::nn::functional;
  const auto unit = F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12);
  const torch::Tensor q = F::normalize(queries.to(torch::kFloat), unit);
  const torch::Tensor ct = F::normalize(corpus.to(torch::kFloat), unit).t();
  const int64_t rows = std::max<int64_t>(1, std::min(num_queries, (int64_t{1} << 25) / num_corpus));
  for (int64_t begin = 0; begin < num_queries; begin += rows) {
    const int64_t n = std::min(rows, num_queries - begin);
    const torch::Tensor scores = q.narrow(0, begin, n).mm(ct);  // [n, C]
    // The k-th best score of each row; every score above it, and of those equal to it the ones
    // of the lowest indices, k in all (torch.topk leaves open which of equal scores it takes).
    const torch::Tensor kth = std::get<0>(scores.topk(k, 1, true, false)).amin(1, true);
    const torch::Tensor above = scores.gt(kth);
    const torch::Tensor equal = scores.eq(kth);
    const torch::Tensor need = above.sum(1, true).neg().add(k);
    const torch::Tensor take =
        above.logical_or(equal.logical_and(equal.cumsum(1, torch::kInt).le(need)));
    const torch::Tensor where = take.nonzero();  // row-major: each row's columns ascending
    torch::Tensor index, value;
    if (where.size(0) == n * k) {
      index = where.select(1, 1).reshape({n, k});
      value = scores.gather(1, index);
    } else {  // NaN scores: topk's choice
      std::tie(value, index) = scores.topk(k, 1, true, true);
    }
    index = index.to(torch::kCPU, torch::kLong).contiguous();
    value = value.to(torch::kCPU, torch::kFloat).contiguous();
    const int64_t* ip = index.data_ptr<int64_t>();
    const float* vp = value.data_ptr<float>();
    for (int64_t r = 0; r < n; ++r) {
      std::vector<RetrievalHit>& hits = out[begin + r];
      hits.resize(k);
      for (int64_t j = 0; j < k; ++j) hits[j] = {ip[r * k + j], vp[r * k + j]};
      std::sort(hits.begin(), hits.end(), [](const RetrievalHit& a, const RetrievalHit& b) {
        const float sa = SortKey(a.score), sb = SortKey(b.score);
        return sa != sb ? sa > sb : a.index < b.index;
      });
    }
  }
  return out;
}

std::map<std::string, double> RetrievalMetrics(const torch::Tensor& queries,
                                               const torch::Tensor& corpus,
                                               const std::vector<std::vector<int64_t>>& relevant,
                                               const std::string& suffix) {
  std::vector<int64_t> scored;
  std::vector<std::vector<int64_t>> scored_relevant;
  for (size_t i = 0; i < relevant.size() && static_cast<int64_t>(i) < queries.size(0); ++i) {
    if (relevant[i].empty()) continue;
    scored.push_back(static_cast<int64_t>(i));
    scored_relevant.push_back(relevant[i]);
  }
  torch::Tensor q = queries;
  if (static_cast<int64_t>(scored.size()) != queries.size(0)) {
    q = queries.index_select(0, torch::tensor(scored, torch::kLong).to(queries.device()));
  }
  return RetrievalMetricsFromHits(TopRetrievalHits(q, corpus, kRetrievalMaxK), scored_relevant,
                                  suffix);
}

}  // namespace trainer
}  // namespace tunefleet
