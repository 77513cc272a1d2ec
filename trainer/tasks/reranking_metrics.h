// Reranking metrics of a cross-encoder's scores, exactly as sentence-transformers'
// CrossEncoderRerankingEvaluator computes them (at_k 10) from each query's documents (its
// positives, then its negatives) and their scores:
//   mrr@k    1 / (rank of the first relevant document among the k best), else 0; the documents
//            ordered by numpy's np.argsort(scores)[::-1]: descending, equal scores later index
//            first (argsort is stable for the up to 16 documents a query has here);
//   ndcg@k   sklearn.metrics.ndcg_score([relevant], [scores], k) with its defaults: gains 0/1,
//            discount 1 / log2(rank + 2) for the k best, ties averaged (each group of equal
//            scores gets its mean gain over the discounts it spans), over the ideal DCG;
//   map      sklearn.metrics.average_precision_score(relevant, scores) (not cut at k): the sum
//            over the distinct scores, best first, of (recall gained) x (precision with every
//            document of at least that score);
// each the mean over the queries; a query without a relevant document counts 0 for all three.
// Keys: "eval/map", "eval/mrr@10", "eval/ndcg@10" (k in the name).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_TRAINER_TASKS_RERANKING_METRICS_H_
#define TUNEFLEET_TRAINER_TASKS_RERANKING_METRICS_H_

#include <map>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

struct RerankedQuery {
  std::vector<double> scores;  // one per document
  std::vector<int> relevant;   // 1 for a positive, 0 for a negative
};

std::map<std::string, double> RerankingMetrics(const std::vector<RerankedQuery>& queries,
                                               int at_k = 10);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_RERANKING_METRICS_H_
