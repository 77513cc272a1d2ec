// The model a task trains: a BERT encoder, sentence-transformers pooling, and the task's head.
//   sts             CosineSimilarityLoss(pool(a), pool(b), score)
//   mnrl            MultipleNegativesRankingLoss(pool(a), pool(b)), scale 20, in-batch negatives
//   nli             SoftmaxLoss: classifier (Linear(3H, K), torch's default init) over
//                   [u; v; |u - v|] with u = pool(a), v = pool(b) (sentence-transformers)
//   classification  transformers' BertForSequenceClassification: classifier (Linear(H, K),
//                   normal(0, 0.02), bias 0) over dropout(pooler_output) of the pair
// Parameters: the encoder's under "bert.", the head's under "classifier." ("classifier.weight",
// "classifier.bias", as transformers and sentence-transformers name them).
// Thread-safety: a module is not thread-safe; one per rank.
#ifndef TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_
#define TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "absl/status/status.h"
#include "comm/process_group.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/pooling.h"
#include "trainer/data/task_data.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl : public torch::nn::Module {
 public:
  // `num_labels` >= 2 for the tasks with a classifier, ignored otherwise. Classification needs
  // an encoder with a pooler.
  TaskModelImpl(BertModel bert, Pooling pooling, TaskType type, int64_t num_labels);

  // Pooled sentence embeddings [B, H].
  torch::Tensor Embed(const TextBatch& batch);
  // Both sides of a pair (sts, mnrl, nli) in one encoder pass: the shorter side is padded to
  // the longer with masked positions, which attention and pooling ignore, so each embedding is
  // Embed's (to rounding: the kernels see other shapes). One pass launches half the kernels,
  // and small batches are bound by the launches.
  std::pair<torch::Tensor, torch::Tensor> EmbedPair(const TextBatch& a, const TextBatch& b);
  // Classifier logits [B, K] (nli, classification).
  torch::Tensor Logits(const TaskBatch& batch);
  // The task's training loss (a scalar).
  torch::Tensor Loss(const TaskBatch& batch);

  // The parameters the task's loss uses: all but the pooler for sts, mnrl and nli (which pool
  // token states instead), all for classification. The optimizer and gradient
  // synchronization take these.
  std::vector<torch::Tensor> TrainableParameters();

  // mnrl under data parallelism: gathers the positives of every rank (with gradients) as
  // candidates; null for one process.
  void set_process_group(comm::ProcessGroup* group, bool mnrl_gather) {
    group_ = group;
    mnrl_gather_ = mnrl_gather;
  }

  BertModel& bert() { return bert_; }
  Pooling pooling() const { return pooling_; }
  TaskType type() const { return type_; }
  bool has_classifier() const { return !classifier_.is_empty(); }

  // The head's parameters ("classifier.weight", "classifier.bias"); empty without a head.
  std::map<std::string, torch::Tensor> HeadStateDict() const;
  // Copies `tensors` (exactly the head's names and shapes) into the head.
  absl::Status LoadHead(const std::map<std::string, torch::Tensor>& tensors);

 private:
  BertModel bert_{nullptr};
  Pooling pooling_;
  TaskType type_;
  double classifier_dropout_;
  torch::nn::Linear classifier_{nullptr};
  comm::ProcessGroup* group_ = nullptr;
  bool mnrl_gather_ = false;
};
TORCH_MODULE(TaskModel);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_
