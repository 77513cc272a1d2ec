// A reranking evaluation set (trainer/tasks/reranking_evaluator.h): queries, each with the
// documents a cross-encoder scores and which of them are relevant, as sentence-transformers'
// CrossEncoderRerankingEvaluator takes its samples.
//
// The file (task.eval with task.eval_kind reranking; `trainer eval --eval_kind reranking
// --data FILE`): JSONL, UTF-8, one object a line (trainer/data/line_reader.h's handling of BOM,
// '\r', blank lines and invalid UTF-8):
//   {"query": "...", "positive": ["...", ...], "negative": ["...", ...]}
// "query" a non-empty string; "positive" a string or a list of strings; "negative" a list of
// strings (may be empty or absent); other keys ignored. A query's documents are its positives,
// then its negatives, in order, duplicates kept (the evaluator's docs = positive + negative). A
// query with no positive counts 0 in every metric, as in the evaluator. Errors are one line
// naming the file, the line and the key.
// Thread-safety: free functions; the structs are plain values.
#ifndef TUNEFLEET_TRAINER_DATA_RERANK_DATA_H_
#define TUNEFLEET_TRAINER_DATA_RERANK_DATA_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

struct RerankQuery {
  std::string query;
  std::vector<std::string> docs;  // positives, then negatives
  std::vector<int> relevant;      // 1 for each positive, 0 for each negative
};

absl::StatusOr<std::vector<RerankQuery>> ReadRerankFile(const std::string& path,
                                                        std::ostream* warnings);

// A set tokenized for a cross-encoder: every (query, document) pair encoded as one text.
struct RerankData {
  std::vector<RerankQuery> queries;
  std::vector<Encoding> pairs;  // query by query, document by document
  std::vector<int64_t> first;   // the index in `pairs` of each query's first document
  int32_t pad_id = 0;           // the tokenizer's
  std::string source;           // the file, for messages
  int64_t size() const { return static_cast<int64_t>(queries.size()); }
};

RerankData TokenizeRerank(std::vector<RerankQuery> queries, const Tokenizer& tokenizer,
                          int64_t max_len, const std::string& source);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_RERANK_DATA_H_
