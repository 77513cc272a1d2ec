#include "trainer/tasks/cross_encoder_task.h"

#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

torch::nn::Linear CrossEncoderTask::MakeHead(int64_t hidden, int64_t num_labels) const {
  torch::nn::Linear head(hidden, num_labels);
  torch::NoGradGuard no_grad;
  head->weight.normal_(0.0, 0.02);
  head->bias.zero_();
  return head;
}

torch::Tensor CrossEncoderTask::Logits(TaskModelImpl& model, const TaskBatch& batch) const {
  return CrossEncoderLogits(model, batch.first);
}

torch::Tensor CrossEncoderLogits(TaskModelImpl& model, const TextBatch& pairs) {
  const BertOutput out = model.bert()->forward(
      pairs.input_ids, pairs.token_type_ids, pairs.padded ? pairs.attention_mask : torch::Tensor());
  TORCH_CHECK(out.pooler_output.defined(),
              "a cross-encoder needs a model with a pooler; this checkpoint has none");
  return model.classifier()(
      torch::dropout(out.pooler_output, model.classifier_dropout(), model.is_training()));
}

torch::Tensor CrossEncoderScores(const torch::Tensor& logits) {
  if (logits.size(1) == 1) return torch::sigmoid(logits.select(1, 0));
  return logits;
}

}  // namespace trainer
}  // namespace tunefleet
