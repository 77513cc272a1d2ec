// The line `trainer train` prints after an evaluation:
//   eval step 40 at 1280 samples:  eval/map@100 0.72523  eval/mrr@10 0.72106 ...  (0.60 s)
// It shows the primary metric (at every Matryoshka dim too, "eval/ndcg@10@64") and the headline
// metrics (spearman, pearson, accuracy, loss; ndcg@10, mrr@10, recall@1, recall@10, map@100);
// the rest (retrieval's accuracy@k, precision@k, the other cut-offs and dims) go only to
// metrics.jsonl, and the line says how many there are in all.
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_TRAIN_EVAL_LINE_H_
#define TUNEFLEET_TRAINER_TRAIN_EVAL_LINE_H_

#include <cstdint>
#include <map>
#include <string>

namespace tunefleet {
namespace trainer {

std::string EvalLine(int64_t step, int64_t samples, const std::map<std::string, double>& metrics,
                     const std::string& primary, double seconds);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TRAIN_EVAL_LINE_H_
