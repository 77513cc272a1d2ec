// The base of the losses over sentence embeddings (cosine, cosent, angle, mnrl, cached_mnrl,
// contrastive): the batch's texts (a, b, then each hard-negative column) are embedded in one
// encoder pass and the loss's LossOn computes the value over the embeddings. With
// task.matryoshka_dims the value is sentence-transformers' MatryoshkaLoss around it:
//   sum over the dims d of weight_d * LossOn(each embedding's first d components)
// (no renormalization: the losses' cosines normalize), weights 1 unless task.matryoshka_weights.
// Thread-safety: immutable; Loss uses the model from one thread.
#ifndef TUNEFLEET_TRAINER_TASKS_EMBEDDING_TASK_H_
#define TUNEFLEET_TRAINER_TASKS_EMBEDDING_TASK_H_

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "trainer/config/train_config.h"
#include "trainer/data/task_data.h"
#include "trainer/tasks/task.h"

namespace tunefleet {
namespace trainer {

class EmbeddingTask : public Task {
 public:
  explicit EmbeddingTask(const TaskConfig& config);

  // The loss in words, then ", in MatryoshkaLoss over dims 768, 512 (weights 1, 1)".
  std::string Describe() const final;
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override;

  // The value over `embeddings` [B, H] each: a's, b's, then each negative column's.
  virtual torch::Tensor LossOn(TaskModelImpl& model, const std::vector<torch::Tensor>& embeddings,
                               const TaskBatch& batch) const = 0;
  // LossOn, or with task.matryoshka_dims the weighted sum over the truncated embeddings.
  torch::Tensor MatryoshkaLossOn(TaskModelImpl& model, const std::vector<torch::Tensor>& embeddings,
                                 const TaskBatch& batch) const;

 protected:
  virtual std::string DescribeLoss() const = 0;
  // The batch's text batches in order: first, second (if any), the negatives.
  static std::vector<TextBatch> Texts(const TaskBatch& batch);

 private:
  std::vector<int64_t> dims_;
  std::vector<double> weights_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_TASKS_EMBEDDING_TASK_H_
