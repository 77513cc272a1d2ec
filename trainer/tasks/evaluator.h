// Evaluation of a task model on a TaskData set, in eval mode and without gradients, batch by
// batch (sentences sorted by length within the set for less padding; results in input order;
// both sides of a pair in one encoder pass; results kept on the device until the end of the set),
// as the model's task says (trainer/tasks/task.h, Evaluation):
//   kSimilarity     eval/spearman and eval/pearson of cos(pool(a), pool(b)) against the scores
//                   (sentence-transformers' EmbeddingSimilarityEvaluator, cosine)
//   kAccuracy       eval/accuracy and eval/loss (mean cross entropy) of the head's logits
//   kRetrieval      eval/ndcg@10, eval/mrr@10, ... of queries against a corpus
//                   (trainer/tasks/retrieval_evaluator.h; sentence-transformers'
//                   InformationRetrievalEvaluator)
//   kReranking      eval/map, eval/mrr@10, eval/ndcg@10 of a cross-encoder's scores
//                   (trainer/tasks/reranking_evaluator.h; CrossEncoderRerankingEvaluator)
//   kTriplet        eval/accuracy of (anchor, positive, negative) rows: cos(a, p) > cos(a, n)
//                   (trainer/tasks/triplet_evaluator.h; TripletEvaluator)
// With a process group (data parallelism) each rank evaluates every world_size-th example and
// the results are all-reduced: every rank returns the same metrics, and every rank must call it.
// `dims` (task.matryoshka_dims): the similarity, retrieval and triplet metrics also of the
// embeddings truncated to their first d components, each key followed by "@d"
// ("eval/spearman@128", "eval/ndcg@10@128", "eval/accuracy@128"); the head's accuracy ignores
// them (the head takes the whole embedding).
// The model is returned to its previous train/eval mode. LibTorch errors become a Status.
// Thread-safety: uses the model; one caller at a time.
#ifndef TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_
#define TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/data/rerank_data.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/data/task_data.h"
#include "trainer/model/autocast.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

// What a run evaluates on (task.eval, or the retrieval files): exactly one of `pairs` (examples
// with scores or labels: similarity, accuracy), `retrieval` (queries and a corpus), `reranking`
// and `triplets`.
struct EvalSet {
  std::unique_ptr<TaskData> pairs;
  std::unique_ptr<RetrievalData> retrieval;
  std::unique_ptr<RerankData> reranking;  // a cross-encoder's queries and documents
  std::unique_ptr<TaskData> triplets;     // (anchor, positive, negative) rows (MakeTripletData)

  // The examples, the queries, or the triplets.
  int64_t size() const {
    return pairs       ? pairs->size()
           : retrieval ? retrieval->size()
           : reranking ? reranking->size()
           : triplets  ? triplets->size()
                       : 0;
  }
  // The pairs' number of labels (TaskData::num_labels); 0 for retrieval.
  int64_t num_labels() const { return pairs ? pairs->num_labels() : 0; }
};

// The metrics of the model on `data` as its evaluation says (retrieval for a retrieval set,
// reranking for a reranking set, triplet accuracy for triplets).
absl::StatusOr<std::map<std::string, double>> Evaluate(TaskModel& model, const EvalSet& data,
                                                       const torch::Device& device,
                                                       int64_t batch_size, Precision precision,
                                                       comm::ProcessGroup* group = nullptr,
                                                       const std::vector<int64_t>& dims = {});

absl::StatusOr<std::map<std::string, double>> Evaluate(TaskModel& model, const TaskData& data,
                                                       const torch::Device& device,
                                                       int64_t batch_size, Precision precision,
                                                       comm::ProcessGroup* group = nullptr,
                                                       const std::vector<int64_t>& dims = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_
