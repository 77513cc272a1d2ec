// What a task is to the trainer: the Task interface that a task.loss's entry in the loss
// registry (trainer/tasks/all_losses.h) builds, and that entry, LossKind. A task is
//   - a data kind, task.type (trainer/tasks/task_types.h): what each example must carry and how
//     it is batched (trainer/data/task_data.h), for training and for evaluation (task.eval), and
//     how it is evaluated by default;
//   - a loss, task.loss: its model head over the pooled encoder, if any (TaskModel holds it as
//     "classifier."), and its value on a batch;
//   - its evaluation, task.eval_kind (trainer/tasks/evaluator.h): the similarity of the pair's
//     embeddings against scores, a classifier's accuracy, or retrieval;
//   - what its loss needs beside the encoder and head, loaded once at set-up (PrepareModel; gist:
//     its guide model).
// A LossKind names the task types it fits, parses the loss's own YAML keys into TaskSettings
// (trainer/config/train_config.h), and builds the Task. Nothing outside an entry's module knows
// its loss name or settings.
// Thread-safety: kinds are immutable statics; a Task is immutable and may be shared, but the
// TaskModel its methods take is used from one thread.
#ifndef TUNEFLEET_TRAINER_TASKS_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_TASK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/modules/linear.h>
#include <torch/types.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "trainer/config/train_config.h"
#include "trainer/data/task_data.h"
#include "trainer/tasks/task_types.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl;

class Task {
 public:
  // `config.type` a registered task type, config.loss its loss (resolved: not empty).
  explicit Task(const TaskConfig& config);
  virtual ~Task() = default;

  const std::string& type() const { return type_; }  // task.type
  const std::string& loss() const { return loss_; }  // task.loss
  // The loss in words, with its settings ("OnlineContrastiveLoss (margin 0.5)").
  virtual std::string Describe() const = 0;
  const DataKind& train_data() const { return train_data_; }
  const DataKind& eval_data() const { return eval_data_; }
  Evaluation evaluation() const { return evaluation_; }

  // Whether the task has a head (then MakeHead returns it and Logits applies it).
  virtual bool has_head() const { return false; }
  // A new head for an encoder of width `hidden` and `num_labels` (>= 2) classes.
  virtual torch::nn::Linear MakeHead(int64_t hidden, int64_t num_labels) const { return nullptr; }
  // Whether the head is the encoder family's sequence classification head (cross-encoders,
  // trainer/model/classifier_heads.h), which TaskModel makes instead of MakeHead's.
  virtual bool family_head() const { return false; }
  // Whether the loss takes the other examples of the batch as negatives (mnrl, cached_mnrl): then
  // a text twice in a batch is a false negative, and train.batch_sampler defaults to
  // no_duplicates.
  virtual bool in_batch_negatives() const { return false; }
  // Whether the loss runs its own backward passes from a hook on the loss it returns
  // (cached_mnrl: GradCache's mini-batches). The step then takes no CUDA graphs, and gradient
  // synchronization starts after the whole backward.
  virtual bool multi_pass_backward() const { return false; }
  // How many texts' activations the encoder holds at once in a step, for the memory estimate:
  // 0 for all of the batch's (every loss but cached_mnrl, whose mini-batch it is).
  virtual int64_t activation_texts() const { return 0; }
  // Whether the loss uses the encoder's pooler (else the pooler is not trained); with a family
  // head, only where the family's head does (TaskModelImpl::uses_pooler).
  virtual bool uses_pooler() const { return false; }
  // The head's logits [B, K] on `batch` (tasks with a head).
  virtual torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const;
  // The training loss on `batch`, a scalar.
  virtual torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const = 0;
  // Called once by the run's set-up on the model it trains (on the CPU, before it moves to its
  // device), with the tokenizer of model.path and the texts' longest length in tokens: loads what
  // the loss needs beside the encoder and head into `model` (TaskModelImpl::SetLossModule; gist:
  // the guide model of task.guide_model). Errors name the key. Nothing for most losses.
  virtual absl::Status PrepareModel(TaskModelImpl& model, const Tokenizer& tokenizer,
                                    int64_t max_len) const {
    return absl::OkStatus();
  }
  // Whether the batch builds the pairs the encoder sees (a cross-encoder's in-batch negatives,
  // a query's documents): their number and length vary from batch to batch, so the step takes
  // no CUDA graphs.
  virtual bool builds_pairs() const { return false; }

 protected:
  DataKind& mutable_train_data() { return train_data_; }

 private:
  std::string type_, loss_;
  DataKind train_data_, eval_data_;
  Evaluation evaluation_;
};

using TaskPtr = std::shared_ptr<const Task>;

struct LossKind {
  std::string loss;                // task.loss
  std::vector<std::string> types;  // the task types it fits
  // The task keys it takes beyond the common ones (e.g. loss_scale, margin).
  std::vector<std::string> keys;
  // Whether it is a loss over sentence embeddings (then task.matryoshka_dims may wrap it).
  bool embeddings = false;
  // Reads its own keys from the task section (which may give only keys of `keys`); errors name
  // the key (ConfigMap::Error). Null for a kind with no settings of its own.
  absl::StatusOr<std::shared_ptr<const TaskSettings>> (*parse)(const ConfigMap& task);
  // The task for `config` (config.loss is this kind's; config.settings: this kind's, or null for
  // its defaults).
  TaskPtr (*build)(const TaskConfig& config);
  // Instead of `parse`, for a kind whose keys or defaults depend on the task type it is used
  // with (mnrl: a bi-encoder's or a cross-encoder's): the type is resolved (not empty).
  absl::StatusOr<std::shared_ptr<const TaskSettings>> (*parse_typed)(
      const ConfigMap& task, const std::string& type) = nullptr;
};

// The shortest decimal text of `v` that reads back as `v` (for TaskSettings::Values).
std::string ShortestNumber(double v);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_H_
