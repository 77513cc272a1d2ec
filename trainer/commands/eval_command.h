// `trainer eval --model DIR --task sts|nli|classification --data FILE [--format F]
//  [--batch_size N] [--max_len N] [--pooling mean|cls|max] [--device auto|cpu|cuda]`:
// evaluates a model folder (as `trainer train` writes it: a Hugging Face / sentence-transformers
// folder, plus head.safetensors for nli and classification) on a data file, and prints one JSON
// line: {"eval/spearman": ..., "eval/pearson": ..., "examples": N} for sts, {"eval/accuracy":
// ..., "eval/loss": ..., "examples": N} for the others (trainer/tasks/evaluator.h). --format
// defaults from the file name: *sick* -> sick, msr_paraphrase* -> mrpc, *.csv -> stsb, *.jsonl ->
// jsonl, else tsv. Retrieval (`--eval_kind retrieval` with --data's (anchor, positive[, negatives])
// rows, or
// `--queries Q.jsonl --corpus C.jsonl --qrels QRELS.tsv` in BEIR's layout,
// trainer/data/retrieval_data.h): sentence-transformers' InformationRetrievalEvaluator metrics
// (trainer/tasks/retrieval_evaluator.h), {"eval/ndcg@10": ..., "eval/mrr@10": ..., ...,
// "queries": N}. Reranking (`--eval_kind reranking --data FILE`, a cross-encoder folder, FILE's
// {"query", "positive", "negative"} rows, trainer/data/rerank_data.h):
// CrossEncoderRerankingEvaluator's {"eval/map": ..., "eval/mrr@10": ..., "eval/ndcg@10": ...,
// "queries": N}. Triplet (`--eval_kind triplet --data FILE`, FILE's (anchor, positive, negative)
// rows, trainer/tasks/triplet_evaluator.h): TripletEvaluator's {"eval/accuracy": ...,
// "examples": N}.
// Exit codes: 0; 2 for bad input (one line naming the file); 1 when evaluation fails.
#ifndef TUNEFLEET_TRAINER_COMMANDS_EVAL_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_EVAL_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

int RunEval(const std::vector<std::string>& args);

// The --format default for a data file's name.
std::string GuessFormat(const std::string& path);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_EVAL_COMMAND_H_
