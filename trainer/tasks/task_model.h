// The model a task trains: a BERT encoder, sentence-transformers pooling, and the task's head
// (trainer/tasks/task.h: the task makes the head and computes the logits and the loss; each
// task's module says how).
// Parameters: the encoder's under "bert.", the head's under "classifier." ("classifier.weight",
// "classifier.bias", as transformers and sentence-transformers name them; a cross-encoder's is
// its family's head, trainer/model/classifier_heads.h, whose HeadStateDict names are the
// family's class's), a frozen loss module's (gist's guide) under "loss.".
// Thread-safety: a module is not thread-safe; one per rank.
#ifndef TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_
#define TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_

#include <map>
#include <memory>
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
#include "trainer/model/classifier_heads.h"
#include "trainer/model/pooling.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl : public torch::nn::Module {
 public:
  // `num_labels` >= 2 for the tasks with a head, ignored otherwise. A task that uses the pooler
  // needs an encoder with one.
  TaskModelImpl(BertModel bert, Pooling pooling, TaskPtr task, int64_t num_labels);

  // Pooled sentence embeddings [B, H]. Without include_prompt, pooling leaves out each batch's
  // first TextBatch::prompt_length tokens (MaskPrompt, trainer/model/pooling.h).
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
  // Whether the loss uses the encoder's pooler: the task's, and with a family head, the head's.
  bool uses_pooler() const;

  // Data parallelism: this rank's process group, for a loss that gathers across ranks (mnrl);
  // null for one process.
  void set_process_group(comm::ProcessGroup* group) { group_ = group; }
  comm::ProcessGroup* process_group() const { return group_; }

  // A module the loss keeps beside the model, as a sentence-transformers loss module does (gist:
  // its frozen guide encoder, trainer/tasks/gist_loss.h): registered as "loss" so that it moves
  // with the model (to()), but never trained: its parameters take no gradients,
  // TrainableParameters leaves them out, and train() leaves it in eval mode. Set at most once, at
  // set-up (Task::PrepareModel); null without one.
  void SetLossModule(std::shared_ptr<torch::nn::Module> module);
  torch::nn::Module* loss_module() const { return loss_module_.get(); }
  // Module::train, then the loss module back to eval mode.
  void train(bool on = true) override;

  // model.include_prompt (default true): whether pooling takes the prompt's tokens.
  void set_include_prompt(bool include) { include_prompt_ = include; }
  bool include_prompt() const { return include_prompt_; }

  BertModel& bert() { return bert_; }
  Pooling pooling() const { return pooling_; }
  const Task& task() const { return *task_; }
  // Several datasets (task.datasets): the task whose Loss and Logits the next steps use, another
  // dataset's; it must agree with the model's head (trainer/train/run_setup.h checks).
  void set_task(TaskPtr task) { task_ = std::move(task); }
  bool has_classifier() const { return !classifier_.is_empty() || !family_head_.is_empty(); }
  // The head of a task whose head is a Linear (empty without one: no head, or a family head).
  torch::nn::Linear& classifier() { return classifier_; }
  // The family's sequence classification head of a task with Task::family_head (else empty).
  ClassifierHeadModule& family_head() { return family_head_; }

  // The head's parameters by the names in the files ("classifier.weight", "classifier.bias";
  // a family head's as its class names them); empty without a head.
  std::map<std::string, torch::Tensor> HeadStateDict() const;
  // Copies `tensors` (exactly the head's names and shapes) into the head.
  absl::Status LoadHead(const std::map<std::string, torch::Tensor>& tensors);

 private:
  BertModel bert_{nullptr};
  Pooling pooling_;
  TaskPtr task_;
  torch::nn::Linear classifier_{nullptr};
  ClassifierHeadModule family_head_{nullptr};
  comm::ProcessGroup* group_ = nullptr;
  std::shared_ptr<torch::nn::Module> loss_module_;
  bool include_prompt_ = true;

  // The mask pooling uses for `batch`: its attention mask, less the prompt without
  // include_prompt.
  torch::Tensor PoolingMask(const TextBatch& batch) const;
  // Embed with `pool_mask` as pooling's mask.
  torch::Tensor EmbedMasked(const TextBatch& batch, const torch::Tensor& pool_mask);
};
TORCH_MODULE(TaskModel);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_MODEL_H_
