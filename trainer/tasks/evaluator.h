// Evaluation of a task model on a TaskData set, in eval mode and without gradients, batch by
// batch (sentences sorted by length within the set for less padding; results in input order;
// both sides of a pair in one encoder pass; results kept on the device until the end of the set),
// as the model's task says (trainer/tasks/task.h, Evaluation):
//   kSimilarity     eval/spearman and eval/pearson of cos(pool(a), pool(b)) against the scores
//                   (sentence-transformers' EmbeddingSimilarityEvaluator, cosine)
//   kAccuracy       eval/accuracy and eval/loss (mean cross entropy) of the head's logits
// With a process group (data parallelism) each rank evaluates every world_size-th example and
// the results are all-reduced: every rank returns the same metrics, and every rank must call it.
// The model is returned to its previous train/eval mode. LibTorch errors become a Status.
// Thread-safety: uses the model; one caller at a time.
#ifndef TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_
#define TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/model/autocast.h"
#include "trainer/data/task_data.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<std::map<std::string, double>> Evaluate(TaskModel& model, const TaskData& data,
                                                       const torch::Device& device,
                                                       int64_t batch_size, Precision precision,
                                                       comm::ProcessGroup* group = nullptr);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_EVALUATOR_H_
