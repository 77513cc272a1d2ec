#include "trainer/tasks/reranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

// Document indices best first, as np.argsort(scores)[::-1] with a stable ascending sort.
std::vector<size_t> Ranking(const std::vector<double>& scores) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  std::reverse(order.begin(), order.end());
  return order;
}

double Mrr(const RerankedQuery& q, const std::vector<size_t>& ranking, int at_k) {
  for (size_t r = 0; r < ranking.size() && r < static_cast<size_t>(at_k); ++r) {
    if (q.relevant[ranking[r]]) return 1.0 / static_cast<double>(r + 1);
  }
  return 0.0;
}

// sklearn's _tie_averaged_dcg over the k best (discounts beyond k are 0).
double TieAveragedDcg(const std::vector<double>& scores, const std::vector<int>& gains, int at_k) {
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  double dcg = 0;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    double gain = 0;
    while (end < order.size() && scores[order[end]] == scores[order[begin]]) {
      gain += gains[order[end]];
      ++end;
    }
    double discounts = 0;
    for (size_t r = begin; r < end && r < static_cast<size_t>(at_k); ++r) {
      discounts += 1.0 / std::log2(static_cast<double>(r) + 2.0);
    }
    dcg += gain / static_cast<double>(end - begin) * discounts;
    begin = end;
  }
  return dcg;
}

double Ndcg(const RerankedQuery& q, int at_k) {
  std::vector<double> ideal_scores(q.relevant.begin(), q.relevant.end());
  const double ideal = TieAveragedDcg(ideal_scores, q.relevant, at_k);
  if (ideal == 0) return 0.0;
  return TieAveragedDcg(q.scores, q.relevant, at_k) / ideal;
}

// average_precision_score: over the distinct thresholds, best first.
double AveragePrecision(const RerankedQuery& q) {
  std::vector<size_t> order(q.scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return q.scores[a] > q.scores[b]; });
  const double positives = std::accumulate(q.relevant.begin(), q.relevant.end(), 0.0);
  if (positives == 0) return 0.0;
  double ap = 0, tp = 0, recall_before = 0;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && q.scores[order[end]] == q.scores[order[begin]]) {
      tp += q.relevant[order[end]];
      ++end;
    }
    const double recall = tp / positives;
    ap += (recall - recall_before) * (tp / static_cast<double>(end));
    recall_before = recall;
    begin = end;
  }
  return ap;
}

}  // namespace

std::map<std::string, double> RerankingMetrics(const std::vector<RerankedQuery>& queries,
                                               int at_k) {
  double map = 0, mrr = 0, ndcg = 0;
  for (const RerankedQuery& q : queries) {
    if (std::accumulate(q.relevant.begin(), q.relevant.end(), 0) == 0) continue;  // 0, 0, 0
    mrr += Mrr(q, Ranking(q.scores), at_k);
    ndcg += Ndcg(q, at_k);
    map += AveragePrecision(q);
  }
  const double n = queries.empty() ? 1.0 : static_cast<double>(queries.size());
  return {{"eval/map", map / n},
          {absl::StrCat("eval/mrr@", at_k), mrr / n},
          {absl::StrCat("eval/ndcg@", at_k), ndcg / n}};
}

}  // namespace trainer
}  // namespace tunefleet
