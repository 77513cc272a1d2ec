// A cross-encoder's scores and its reranking evaluation (task.eval_kind reranking):
//   PredictPairs      sentence-transformers' CrossEncoder.predict on encoded pairs: eval mode,
//                     no gradients, batches of `batch_size` pairs in input order, each padded
//                     to its longest; the default activation (sigmoid for one output);
//   EvaluateReranking CrossEncoderRerankingEvaluator: every query's documents scored, then
//                     eval/map, eval/mrr@10, eval/ndcg@10 (trainer/tasks/reranking_metrics.h).
// Every rank of a data-parallel run scores the whole set (no collectives): each returns the same
// metrics. The model is returned to its previous train/eval mode; LibTorch errors become a Status.
// Thread-safety: uses the model; one caller at a time.
#ifndef TUNEFLEET_TRAINER_TASKS_RERANKING_EVALUATOR_H_
#define TUNEFLEET_TRAINER_TASKS_RERANKING_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "trainer/data/rerank_data.h"
#include "trainer/data/tokenizer.h"
#include "trainer/model/autocast.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

// Scores, float32 on the CPU: [N] for a one-output head, [N, K] otherwise.
absl::StatusOr<torch::Tensor> PredictPairs(TaskModel& model, const std::vector<Encoding>& pairs,
                                           int32_t pad_id, const torch::Device& device,
                                           int64_t batch_size, Precision precision);

absl::StatusOr<std::map<std::string, double>> EvaluateReranking(TaskModel& model,
                                                                const RerankData& data,
                                                                const torch::Device& device,
                                                                int64_t batch_size,
                                                                Precision precision);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_RERANKING_EVALUATOR_H_
