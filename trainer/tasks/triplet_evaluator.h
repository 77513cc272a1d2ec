// Triplet evaluation of a bi-encoder (task.eval_kind triplet, Evaluation::kTriplet), as
// sentence-transformers' TripletEvaluator with its defaults (cosine, margin 0): the fraction of
// (anchor, positive, negative) rows where cos(anchor, positive) > cos(anchor, negative) + margin,
// strictly (a tie is not counted), reported as eval/accuracy.
//   MakeTripletData   the rows tokenized: each must have exactly one negative (else one line
//                     "SOURCE: row N has K text columns; triplet evaluation takes 3 ..."); a
//                     row's label, if any, is ignored (no row is dropped, as there).
//   TripletCorrect    the comparison on given embeddings, as TripletEvaluator computes it
//                     (each side L2-normalized, then the row-wise dot product, in fp32).
//   EvaluateTriplets  the model on the rows: in eval mode without gradients, under the run's
//                     precision, the rows sorted by length (longest first) in batches of
//                     `batch_size`, a row's three texts in one encoder pass, the embeddings
//                     taken in fp32. With a process group each rank evaluates every
//                     world_size-th row of that order and the counts are all-reduced: every
//                     rank returns the same metrics, and every rank must call it. `dims`
//                     (task.matryoshka_dims): also the accuracy of the embeddings truncated to
//                     their first d components ("eval/accuracy@128", TripletEvaluator's
//                     truncate_dim); a dim outside [1, width] is an error. The model is returned
//                     to its previous train/eval mode; LibTorch errors become a Status.
// Thread-safety: TripletCorrect is pure; EvaluateTriplets uses the model, one caller at a time.
#ifndef TUNEFLEET_TRAINER_TASKS_TRIPLET_EVALUATOR_H_
#define TUNEFLEET_TRAINER_TASKS_TRIPLET_EVALUATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "absl/status/statusor.h"
#include "comm/process_group.h"
#include "trainer/data/example.h"
#include "trainer/data/task_data.h"
#include "trainer/data/tokenizer.h"
#include "trainer/model/autocast.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

// `rows` (anchor = a, positive = b, negatives[0]) tokenized to at most `max_len` tokens each;
// `source` names the file in errors.
absl::StatusOr<TaskData> MakeTripletData(std::vector<Example> rows, const Tokenizer& tokenizer,
                                         int64_t max_len, const std::string& source);

// Bool [N]: cos(anchors[i], positives[i]) > cos(anchors[i], negatives[i]) + margin, for
// embeddings [N, H] (computed in fp32 on their device).
torch::Tensor TripletCorrect(const torch::Tensor& anchors, const torch::Tensor& positives,
                             const torch::Tensor& negatives, double margin = 0.0);

absl::StatusOr<std::map<std::string, double>> EvaluateTriplets(
    TaskModel& model, const TaskData& data, const torch::Device& device, int64_t batch_size,
    Precision precision, comm::ProcessGroup* group = nullptr,
    const std::vector<int64_t>& dims = {});

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TRIPLET_EVALUATOR_H_
