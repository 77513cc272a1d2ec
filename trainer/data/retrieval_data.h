// A retrieval evaluation set (trainer/tasks/retrieval_evaluator.h): queries, a corpus, and which
// corpus entries are relevant to each query, as sentence-transformers'
// InformationRetrievalEvaluator takes them (queries: id -> text, corpus: id -> text,
// relevant_docs: query id -> set of corpus ids).
//
// From files in BEIR's layout (ReadRetrievalFiles; the trainer YAML's task.eval_queries,
// task.eval_corpus, task.eval_qrels), all UTF-8 (a BOM, a final '\r' and blank lines ignored;
// invalid UTF-8 replaced with one warning, trainer/data/line_reader.h):
//   queries.jsonl  one object a line: "_id" (a string, or a number: its JSON text) and "text"
//                  (a non-empty string); other keys ignored.
//   corpus.jsonl   the same. Only "text" is the entry's text: a "title" is ignored (BEIR's
//                  loaders and sentence-transformers' examples differ on joining it; write the
//                  text you mean into "text").
//   qrels.tsv      query-id <TAB> corpus-id <TAB> score, an optional first line
//                  "query-id<TAB>corpus-id<TAB>score"; a row with score > 0 makes the corpus
//                  entry relevant to the query, one with score <= 0 is ignored.
// The queries are those of queries.jsonl, in file order, that have a relevant entry (the
// evaluator drops the others); the corpus is all of corpus.jsonl, in file order.
// Errors are one line naming the file and the line: a missing or malformed key, a duplicate id,
// an empty text, a qrels row with an unknown query or corpus id, a bad score; or the file
// alone: no query with a relevant entry.
//
// From (anchor, positive[, negatives...]) rows (RetrievalFromPairs: task.eval read with the
// task's format): every distinct anchor (Example::a) is a query, in order of first appearance;
// the corpus is every distinct text among the positives (Example::b) and the negatives
// (Example::negatives), in order of first appearance (a row's b before its negatives); a query's
// relevant entries are the positives of its rows. A row labelled 0 (a non-paraphrase) puts its
// b in the corpus but not among the anchor's relevant entries; scores are ignored (an STS pair
// of any score counts as relevant). Texts are compared exactly.
//
// Thread-safety: free functions; the structs are plain values.
#ifndef TUNEFLEET_TRAINER_DATA_RETRIEVAL_DATA_H_
#define TUNEFLEET_TRAINER_DATA_RETRIEVAL_DATA_H_

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/example.h"
#include "trainer/data/tokenizer.h"

namespace tunefleet {
namespace trainer {

struct RetrievalSet {
  std::vector<std::string> query_ids, queries;  // each query has >= 1 relevant entry
  std::vector<std::string> corpus_ids, corpus;
  // Per query, the corpus indices of its relevant entries: distinct, in order of first mention.
  std::vector<std::vector<int64_t>> relevant;
};

// `warnings`: where an invalid-UTF-8 warning goes (null: nowhere).
absl::StatusOr<RetrievalSet> ReadRetrievalFiles(const std::string& queries_path,
                                                const std::string& corpus_path,
                                                const std::string& qrels_path,
                                                std::ostream* warnings = &std::cerr);

// `source` names the rows in errors (the file): no rows, no anchor with a positive. Ids are the
// 1-based order of first appearance ("q1", "d1", ...).
absl::StatusOr<RetrievalSet> RetrievalFromPairs(const std::vector<Example>& rows,
                                                const std::string& source);

// A retrieval set tokenized for the evaluator: each query and corpus text encoded alone
// (Tokenizer::Encode with max_len).
struct RetrievalData {
  RetrievalSet set;
  std::vector<Encoding> queries, corpus;
  int32_t pad_id = 0;
  std::string source;  // for messages: the qrels file, or task.eval

  int64_t size() const { return static_cast<int64_t>(queries.size()); }  // queries
};

RetrievalData TokenizeRetrieval(RetrievalSet set, const Tokenizer& tokenizer, int64_t max_len,
                                const std::string& source);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_RETRIEVAL_DATA_H_
