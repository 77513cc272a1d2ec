// What every cross-encoder loss shares (task types classification and cross_encoder): the pair
// as one text through the encoder and its family's sequence classification head with K outputs
// (trainer/model/classifier_heads.h: BERT's pooler, dropout and Linear(H, K) as
// BertForSequenceClassification; RoBERTa's, MPNet's and DistilBERT's on the first token), a new
// head initialised as transformers does (weights normal(0, initializer_range), biases 0).
// Thread-safety: immutable; the TaskModel its methods take is used from one thread.
#ifndef TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_TASK_H_

#include <torch/types.h>

#include "trainer/data/task_data.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

class CrossEncoderTask : public Task {
 public:
  using Task::Task;
  bool has_head() const override { return true; }
  bool family_head() const override { return true; }
  // Where the family's head takes the pooler's output (BERT's): TaskModelImpl::uses_pooler.
  bool uses_pooler() const override { return true; }
  torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const override;
};

// The head's logits [B, K] of a batch of joint pairs.
torch::Tensor CrossEncoderLogits(TaskModelImpl& model, const TextBatch& pairs);

// sentence-transformers' CrossEncoder.predict of logits [B, K] with its default activation:
// sigmoid for K = 1, as [B]; the logits themselves otherwise.
torch::Tensor CrossEncoderScores(const torch::Tensor& logits);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_CROSS_ENCODER_TASK_H_
