#include "trainer/tasks/cross_encoder_task.h"

#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

torch::Tensor CrossEncoderTask::Logits(TaskModelImpl& model, const TaskBatch& batch) const {
  return CrossEncoderLogits(model, batch.first);
}

torch::Tensor CrossEncoderLogits(TaskModelImpl& model, const TextBatch& pairs) {
  const BertOutput out = model.bert()->forward(
      pairs.input_ids, pairs.token_type_ids, pairs.padded ? pairs.attention_mask : torch::Tensor());
  return model.family_head()->Forward(out.last_hidden_state, out.pooler_output,
                                      model.is_training());
}

torch::Tensor CrossEncoderScores(const torch::Tensor& logits) {
  if (logits.size(1) == 1) return torch::sigmoid(logits.select(1, 0));
  return logits;
}

}  // namespace trainer
}  // namespace tunefleet
