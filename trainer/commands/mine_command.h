// `trainer mine --model DIR --data PAIRS --output FILE [--num_negatives 3] [--range_min 0]
//  [--range_max N] [--max_score X] [--min_score Y] [--absolute_margin M] [--relative_margin R]
//  [--sampling_strategy top|random] [--output_format triplet|n-tuple|labeled-pair|labeled-list]
//  [--corpus FILE] [--cross_encoder DIR] [--batch_size 32] [--seed 0] [--device auto|cpu|cuda]`:
// sentence-transformers' util.mine_hard_negatives (trainer/tasks/hard_negatives.h) with the
// bi-encoder DIR (its pooling, normalized embeddings, exact search) over PAIRS' (anchor,
// positive) rows: the first two text columns of any trainer data format (format from the file
// name, as `trainer eval` guesses it; JSONL's keys name the output's first two columns, else
// "anchor" and "positive"). --corpus: more texts to draw negatives from, one a line (a .jsonl
// file: each object's "text", as BEIR's corpus.jsonl). --cross_encoder: rescore the candidates
// and positives with a cross-encoder folder when a margin or --max_score is set. FILE: JSONL, one
// row a line, the output format's columns in order. A summary (queries, rows, positive and
// negative score statistics) goes to stderr.
// Scale: the query x corpus scores are computed in blocks on --device and only each query's
// top range_max + max_positives candidates are kept, so memory grows with queries x candidates,
// not queries x corpus; time with queries x corpus (exact search, no approximate index).
// Exit codes: 0; 2 for bad input (one line naming the file and line or flag); 1 on failure.
#ifndef TUNEFLEET_TRAINER_COMMANDS_MINE_COMMAND_H_
#define TUNEFLEET_TRAINER_COMMANDS_MINE_COMMAND_H_

#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

int RunMine(const std::vector<std::string>& args);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_COMMANDS_MINE_COMMAND_H_
