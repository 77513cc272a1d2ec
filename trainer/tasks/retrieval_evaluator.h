// Retrieval evaluation of a task model (trainer/tasks/task.h, Evaluation::kRetrieval), as
// sentence-transformers' InformationRetrievalEvaluator with its defaults: the queries and the
// corpus of a RetrievalData set (trainer/data/retrieval_data.h) embedded by the model (pooled,
// not normalized), then the metrics of trainer/tasks/retrieval_metrics.h (cosine similarity,
// eval/ndcg@10, eval/mrr@10, eval/map@100, eval/accuracy@k, eval/precision@k, eval/recall@k).
//
// Embedding: in eval mode without gradients, under the run's precision (AutocastScope), the
// texts sorted by length (longest first) in batches of `batch_size`, padded to a multiple of 8 on
// a GPU; the embeddings taken in fp32. With a process group each rank embeds every
// world_size-th text of that order and the [N, H] matrices (zeros where another rank embedded)
// are summed with one all-reduce each, so every rank scores the whole set and returns the same
// metrics; every rank must call it.
// `dims` (task.matryoshka_dims): also the metrics of the embeddings truncated to their first d
// components (normalized after truncation, as sentence-transformers' truncate_dim), each key
// followed by "@d": "eval/ndcg@10@128". A dim above the embedding width is an error.
// The model is returned to its previous train/eval mode. LibTorch errors become a Status.
// Thread-safety: uses the model; one caller at a time.
#ifndef TUNEFLEET_TRAINER_TASKS_RETRIEVAL_EVALUATOR_H_
#define TUNEFLEET_TRAINER_TASKS_RETRIEVAL_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/data/retrieval_data.h"
#include "trainer/model/autocast.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<std::map<std::string, double>> EvaluateRetrieval(
    TaskModel& model, const RetrievalData& data, const torch::Device& device, int64_t batch_size,
    Precision precision, comm::ProcessGroup* group = nullptr,
    const std::vector<int64_t>& dims = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_RETRIEVAL_EVALUATOR_H_
