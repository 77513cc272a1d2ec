// The model a task trains: a BERT encoder, sentence-transformers pooling, and the task's head
// (trainer/tasks/task.h: the task makes the head and computes the logits and the loss; each
// task's module says how).
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
#include "trainer/data/task_data.h"
#include "trainer/model/bert_model.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl : public torch::nn::Module {
 public:
  // `num_labels` >= 2 for the tasks with a head, ignored otherwise. A task that uses the pooler
  // needs an encoder with one.
  TaskModelImpl(BertModel bert, Pooling pooling, TaskPtr task, int64_t num_labels);

  // Pooled sentence embeddings [B, H].
  torch::Tensor Embed(const TextBatch& batch);
  // Both sides of a pair (two texts) in one encoder pass: the shorter side is padded to
  // the longer with masked positions, which attention and pooling ignore, so each embedding is
  // Embed's (to rounding: the kernels see other shapes). One pass launches half the kernels,
  // and small batches are bound by the launches.
  std::pair<torch::Tensor, torch::Tensor> EmbedPair(const TextBatch& a, const TextBatch& b);
  // Several text batches in one encoder pass, as EmbedPair: one [B_i, H] embedding per batch.
  std::vector<torch::Tensor> EmbedAll(const std::vector<TextBatch>& texts);
  // The head's logits [B, K] (tasks with a head).
  torch::Tensor Logits(const TaskBatch& batch);
  // The task's training loss (a scalar).
  torch::Tensor Loss(const TaskBatch& batch);

  // The parameters the task's loss uses: all but the pooler for tasks that pool token states,
  // all for a task that uses the pooler. The optimizer and gradient synchronization take these.
  std::vector<torch::Tensor> TrainableParameters();

  // Data parallelism: this rank's process group, for a loss that gathers across ranks (mnrl);
  // null for one process.
  void set_process_group(comm::ProcessGroup* group) { group_ = group; }
  comm::ProcessGroup* process_group() const { return group_; }

  BertModel& bert() { return bert_; }
  Pooling pooling() const { return pooling_; }
  const Task& task() const { return *task_; }
  bool has_classifier() const { return !classifier_.is_empty(); }
  // The head (empty without one) and the dropout before it (the encoder's hidden dropout).
  torch::nn::Linear& classifier() { return classifier_; }
  double classifier_dropout() const { return classifier_dropout_; }

  // The head's parameters ("classifier.weight", "classifier.bias"); empty without a head.
  std::map<std::string, torch::Tensor> HeadStateDict() const;
  // Copies `tensors` (exactly the head's names and shapes) into the head.
  absl::Status LoadHead(const std::map<std::string, torch::Tensor>& tensors);

 private:
  BertModel bert_{nullptr};
  Pooling pooling_;
  TaskPtr task_;
  double classifier_dropout_;
  torch::nn::Linear classifier_{nullptr};
  comm::ProcessGroup* group_ = nullptr;
};
TORCH_MODULE(TaskModel);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_
