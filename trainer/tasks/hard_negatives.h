// Hard-negative mining as sentence-transformers' util.mine_hard_negatives does it (its
// semantics step for step; exact search), on embeddings the caller computed:
//   - the queries are the distinct anchors in order of first appearance; the corpus is the
//     distinct texts of (the given corpus, else the positives) followed by the positives;
//   - scores: cosine of the (normalized) query and corpus embeddings, the top range_max +
//     max_positives candidates of each query (max_positives: the most rows one anchor has);
//     range_max defaults to range_min + num_negatives + max_positives, or range_min +
//     10 x num_negatives + max_positives when a margin or max_score is set;
//   - positive scores: cosine of each (anchor, positive) row, grouped by query; with a
//     cross-encoder and a margin or max_score, the candidates' and the positives' scores are the
//     cross-encoder's instead (rescore);
//   - a query's own positives are never its negatives; absolute_margin drops candidates with
//     score + margin > the query's smallest positive score, relative_margin those with score >
//     that score x (1 - margin), max_score / min_score those above / below (the smallest positive
//     score is taken as the function takes it, whose running offset steps by the previous
//     query's count of positives, the last query's for the first);
//   - the remaining candidates best first, from rank range_min on: the first num_negatives
//     ("top"), or num_negatives drawn from the usable ones ("random", seeded), best first;
//   - output rows (columns as the function names them): triplet (anchor, positive, negative) per
//     usable negative; n-tuple (anchor, positive, negative_1..n) for rows with num_negatives
//     usable; labeled-pair (anchor, text, label 1 for each positive, 0 for each usable negative
//     of the query); labeled-list (anchor, [positive, negatives...], labels [1, 0, ...]).
// The corpus must hold at least range_max + max_positives texts (torch.topk's k).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_TRAINER_TASKS_HARD_NEGATIVES_H_
#define TUNEFLEET_TRAINER_TASKS_HARD_NEGATIVES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"

namespace tunefleet {
namespace trainer {

struct MiningOptions {
  int64_t num_negatives = 3;
  int64_t range_min = 0;
  int64_t range_max = -1;  // -1: the default above
  std::optional<double> max_score, min_score, absolute_margin, relative_margin;
  std::string sampling_strategy = "top";  // top | random
  std::string output_format = "triplet";  // triplet | n-tuple | labeled-pair | labeled-list
  uint64_t seed = 0;                      // random sampling
};

// The texts to mine for, and the texts to embed: every query, then every corpus entry.
struct MiningPlan {
  std::vector<std::string> queries, corpus;
  std::vector<std::vector<int64_t>> positives;  // per query, corpus indices in row order
  int64_t max_positives = 0;
  int64_t range_max = 0;  // resolved
};

absl::StatusOr<MiningPlan> PlanMining(const std::vector<std::string>& anchors,
                                      const std::vector<std::string>& positives,
                                      const std::vector<std::string>& corpus,
                                      const MiningOptions& options);

// One output row: each column's value, a string, a list of strings or a list of labels.
struct MinedValue {
  std::string text;
  std::vector<std::string> texts;
  std::vector<int> labels;
  int label = -1;
  enum class Kind { kText, kTexts, kLabels, kLabel } kind = Kind::kText;
};
struct MinedRows {
  std::vector<std::string> columns;
  std::vector<std::vector<MinedValue>> rows;
};

// Rescores (query, candidate) pairs with a cross-encoder: one score per pair, in order.
using PairScorer = std::function<absl::StatusOr<torch::Tensor>(
    const std::vector<std::pair<std::string, std::string>>& pairs)>;

// `query_embeddings` [Q, H] and `corpus_embeddings` [C, H] of plan.queries and plan.corpus;
// `rescore` null for none. `anchor_column`, `positive_column` name the output's first columns.
absl::StatusOr<MinedRows> MineHardNegatives(const MiningPlan& plan, const MiningOptions& options,
                                            const torch::Tensor& query_embeddings,
                                            const torch::Tensor& corpus_embeddings,
                                            const PairScorer& rescore,
                                            const std::string& anchor_column,
                                            const std::string& positive_column);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_HARD_NEGATIVES_H_
