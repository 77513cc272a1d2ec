// What a task is to the trainer: the Task interface that a task.type's entry in the loss registry
// (trainer/tasks/all_losses.h) builds, and that entry, LossKind. A task says
//   - its data kind: what each example must carry and how it is batched (trainer/data/task_data.h),
//     for training and for evaluation (task.eval);
//   - its model head over the pooled encoder, if any (TaskModel holds it as "classifier.");
//   - its loss on a batch;
//   - its evaluation (trainer/tasks/evaluator.h): the similarity of the pair's embeddings
//     against scores, or a classifier's accuracy.
// A LossKind parses the type's own YAML keys into TaskSettings (trainer/config/train_config.h),
// and builds the Task. Nothing outside an entry's module knows its type name or settings.
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

#include "absl/status/statusor.h"
#include "common/yaml_config.h"
#include "trainer/config/train_config.h"
#include "trainer/data/task_data.h"

namespace tunefleet {
namespace trainer {

class TaskModelImpl;

enum class Evaluation {
  kSimilarity,  // eval/spearman and eval/pearson of cos(pool(a), pool(b)) against the scores
  kAccuracy,    // eval/accuracy and eval/loss of the head's logits against the labels
  kRetrieval,   // eval/ndcg@10, eval/mrr@10, eval/recall@k, eval/map@100 ... of queries against a
                // corpus by cosine (sentence-transformers' InformationRetrievalEvaluator)
};

// The metric that "best" means for `evaluation` (always maximized).
const char* PrimaryMetric(Evaluation evaluation);

class Task {
 public:
  virtual ~Task() = default;

  virtual std::string type() const = 0;  // task.type
  // The loss in words, with its settings ("OnlineContrastiveLoss (margin 0.5)").
  virtual std::string Describe() const = 0;
  virtual DataKind train_data() const = 0;
  virtual DataKind eval_data() const { return train_data(); }
  virtual Evaluation evaluation() const = 0;

  // Whether the task has a head (then MakeHead returns it and Logits applies it).
  virtual bool has_head() const { return false; }
  // A new head for an encoder of width `hidden` and `num_labels` (>= 2) classes.
  virtual torch::nn::Linear MakeHead(int64_t hidden, int64_t num_labels) const { return nullptr; }
  // Whether the loss uses the encoder's pooler (else the pooler is not trained).
  virtual bool uses_pooler() const { return false; }
  // The head's logits [B, K] on `batch` (tasks with a head).
  virtual torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const;
  // The training loss on `batch`, a scalar.
  virtual torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const = 0;
};

using TaskPtr = std::shared_ptr<const Task>;

struct LossKind {
  std::string type;  // task.type
  // The task keys it takes beyond type, train, eval, format and mnrl_gather (e.g. num_labels,
  // margin).
  std::vector<std::string> keys;
  // Reads its own keys from the task section (which may give only keys of `keys`); errors name
  // the key (ConfigMap::Error). Null for a kind with no settings of its own.
  absl::StatusOr<std::shared_ptr<const TaskSettings>> (*parse)(const ConfigMap& task);
  // The task for `config` (config.settings: this kind's, or null for its defaults).
  TaskPtr (*build)(const TaskConfig& config);
};

// The shortest decimal text of `v` that reads back as `v` (for TaskSettings::Values).
std::string ShortestNumber(double v);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_TASK_H_
