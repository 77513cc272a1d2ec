// The task types (task.type): the data kinds a task trains on, each with its default loss and
// evaluation. A type says what an example carries; the loss (task.loss, trainer/tasks/task.h)
// says what is computed on it.
//   sts             pairs with a score (scores / the format's scale, in [0, 1])
//                   default loss cosine, evaluated by similarity (eval/spearman)
//   mnrl            (anchor, positive, negative...) rows: in-batch negatives plus any hard
//                   negatives; default loss mnrl, evaluated by similarity on task.eval's scored
//                   pairs (or by retrieval or triplet, task.eval_kind)
//   nli             pairs with a label; default loss softmax, evaluated by accuracy
//   classification  pairs with a label, encoded as one text (a cross-encoder); softmax, accuracy
//   contrastive     pairs labelled 0 or 1; default loss contrastive, evaluated by similarity
//   cross_encoder   pairs with a score in [0, 1] or a 0/1 label, encoded as one text through a
//                   one-output head; default loss bce, evaluated by reranking (task.eval's
//                   {"query", "positive": [...], "negative": [...]} rows)
//   cross_encoder_mnrl    (anchor, positive, negatives...) rows, each anchor scored with the
//                   batch's candidates as one text; loss mnrl (the cross-encoder's), reranking
//   cross_encoder_margin  (query, positive, negatives...) rows with a teacher's margin per
//                   negative, each pair as one text; loss margin_mse, reranking
//   cross_encoder_list    a query, its documents and a relevance each ({"query", "docs",
//                   "labels"}); losses lambda (default) and listnet, reranking
//   margin          (query, positive, negatives...) rows with a teacher's margin, encoded apart;
//                   loss margin_mse (distillation), evaluated by similarity
//   embedding       a text and a teacher's embedding ({"text", "label": [...]}); loss mse,
//                   evaluated by similarity
// Evaluation (task.eval_kind): similarity needs scores (sts, mnrl, contrastive),
// accuracy a head (nli, classification), retrieval sentence embeddings (the bi-encoder types),
// reranking a cross-encoder's scores (cross_encoder). triplet, like retrieval, takes every
// bi-encoder type (sts, mnrl, nli, contrastive, margin, embedding): it only embeds task.eval's
// (anchor, positive, negative) rows, whatever the training rows are (read with task.format and
// task.columns, so a column format: jsonl, csv or tsv).
// Thread-safety: immutable statics.
#ifndef TUNEFLEET_TRAINER_TASKS_TASK_TYPES_H_
#define TUNEFLEET_TRAINER_TASKS_TASK_TYPES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "trainer/data/task_data.h"

namespace tunefleet {
namespace trainer {

enum class Evaluation {
  kSimilarity,  // eval/spearman and eval/pearson of cos(pool(a), pool(b)) against the scores
  kAccuracy,    // eval/accuracy and eval/loss of the head's logits against the labels
  kRetrieval,   // eval/ndcg@10, eval/mrr@10, eval/recall@k, eval/map@100 ... of queries against a
                // corpus by cosine (sentence-transformers' InformationRetrievalEvaluator)
  kReranking,   // eval/map, eval/mrr@10, eval/ndcg@10 of a cross-encoder's scores of each query's
                // positives and negatives (CrossEncoderRerankingEvaluator)
  kTriplet,     // eval/accuracy: the fraction of (anchor, positive, negative) rows with
                // cos(a, p) > cos(a, n) (sentence-transformers' TripletEvaluator)
};

// The metric that "best" means for `evaluation` (always maximized).
const char* PrimaryMetric(Evaluation evaluation);
// "similarity", "accuracy", "retrieval", "reranking" or "triplet" (task.eval_kind's words).
const char* EvaluationName(Evaluation evaluation);

struct TaskType {
  std::string name;       // task.type
  std::string data;       // what a row carries, in words (for messages)
  RowTarget target;       // training rows
  bool joint_pair;        // a pair encoded as one text
  RowTarget eval_target;  // task.eval's rows for the similarity or accuracy evaluation
  Evaluation evaluation;  // task.eval_kind's default
  std::vector<Evaluation> evaluations;  // the task.eval_kind values it takes
  std::string default_loss;             // task.loss's default
};

const std::vector<TaskType>& AllTaskTypes();
// The type named `name`; null for none.
const TaskType* FindTaskType(absl::string_view name);
// "sts, mnrl, nli, classification or contrastive": the types, for messages.
std::string TaskTypeChoices();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_TYPES_H_
