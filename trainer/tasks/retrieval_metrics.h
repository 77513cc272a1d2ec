// Retrieval metrics of query embeddings against corpus embeddings, exactly as
// sentence-transformers' InformationRetrievalEvaluator computes them with its defaults (cosine
// similarity; accuracy@{1,3,5,10}, precision@{1,3,5,10}, recall@{1,3,5,10}, mrr@10, ndcg@10,
// map@100):
//   - scores: sentence_transformers.util.cos_sim in fp32: each row divided by max(||row||, 1e-12)
//     (F.normalize), then queries @ corpus^T;
//   - each query's top hits: its max_k = 100 highest-scoring corpus entries (all of them when the
//     corpus is smaller), best first;
//   - per query, with R its relevant corpus entries and hits its top hits:
//       accuracy@k   1 if a relevant entry is among the first k hits
//       precision@k  (relevant among the first k) / k
//       recall@k     (relevant among the first k) / |R|
//       mrr@10       1 / (rank of the first relevant hit among the first 10), else 0
//       ndcg@10      DCG(first 10) / IDCG, DCG = sum of rel_i / log2(i + 2) over positions i from
//                    0, IDCG that of min(10, |R|) relevant entries
//       map@100      sum over the relevant hits among the first 100 of (relevant so far) /
//                    (rank), divided by min(100, |R|)
//     and each metric is the mean over the queries. Sums run in double in the evaluator's
//     order: accuracy and mrr as Python sums, the others as numpy's mean (pairwise summation).
//   - queries without a relevant entry are left out (the evaluator's __init__ drops them).
// Ties: hits of equal score (in fp32) are ordered by corpus index, ascending, both for which
// entries make the top max_k and for their order within it. (The evaluator leaves ties to
// torch.topk and Python's heap; there is no order it guarantees.)
// Keys: "eval/accuracy@1" ... "eval/precision@10", "eval/recall@1" ... "eval/recall@10",
// "eval/mrr@10", "eval/ndcg@10", "eval/map@100", each followed by `suffix` ("@128" for the
// embeddings truncated to 128 dimensions).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_TRAINER_TASKS_RETRIEVAL_METRICS_H_
#define TUNEFLEET_TRAINER_TASKS_RETRIEVAL_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

namespace tunefleet {
namespace trainer {

inline constexpr int64_t kRetrievalMaxK = 100;

struct RetrievalHit {
  int64_t index = 0;  // in the corpus
  float score = 0;    // cosine similarity
};

// The metrics from each query's top hits (best first, as TopRetrievalHits gives them) and its
// relevant corpus indices. Queries with no relevant index are left out.
std::map<std::string, double> RetrievalMetricsFromHits(
    const std::vector<std::vector<RetrievalHit>>& hits,
    const std::vector<std::vector<int64_t>>& relevant, const std::string& suffix = "");

// The top min(k, C) hits of each query of `queries` [Q, H] in `corpus` [C, H] (any float dtype,
// on any device; compared in fp32 on that device), best first, ties by index. The scores are
// computed in blocks of queries, so that a block's [rows, C] stays near 32 M entries.
std::vector<std::vector<RetrievalHit>> TopRetrievalHits(const torch::Tensor& queries,
                                                        const torch::Tensor& corpus,
                                                        int64_t k = kRetrievalMaxK);

// Both: the metrics of `queries` against `corpus` with `relevant` (one list per query row).
// Queries with no relevant index are not scored.
std::map<std::string, double> RetrievalMetrics(const torch::Tensor& queries,
                                               const torch::Tensor& corpus,
                                               const std::vector<std::vector<int64_t>>& relevant,
                                               const std::string& suffix = "");

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_RETRIEVAL_METRICS_H_
