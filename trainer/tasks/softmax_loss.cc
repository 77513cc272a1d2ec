#include "trainer/tasks/softmax_loss.h"

#include <memory>

#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

// nli: SoftmaxLoss over the pair's embeddings.
class PairSoftmaxTask : public Task {
 public:
  using Task::Task;
  std::string Describe() const override { return "SoftmaxLoss (Linear(3H, K) on [u; v; |u - v|])"; }
  bool has_head() const override { return true; }
  torch::nn::Linear MakeHead(int64_t hidden, int64_t num_labels) const override {
    return torch::nn::Linear(3 * hidden, num_labels);
  }
  torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const override {
    const auto [u, v] = model.EmbedPair(batch.first, batch.second);
    return model.classifier()(torch::cat({u, v, torch::abs(u - v)}, 1));
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    return ClassificationLoss(model.Logits(batch).to(torch::kFloat), batch.labels);
  }
};

// classification: a cross-encoder's head on the pooler.
class CrossEncoderTask : public Task {
 public:
  using Task::Task;
  std::string Describe() const override {
    return "cross entropy (BertForSequenceClassification's head on the pooler)";
  }
  bool has_head() const override { return true; }
  bool uses_pooler() const override { return true; }
  torch::nn::Linear MakeHead(int64_t hidden, int64_t num_labels) const override {
    torch::nn::Linear head(hidden, num_labels);
    torch::NoGradGuard no_grad;
    head->weight.normal_(0.0, 0.02);
    head->bias.zero_();
    return head;
  }
  torch::Tensor Logits(TaskModelImpl& model, const TaskBatch& batch) const override {
    const TextBatch& pair = batch.first;
    const BertOutput out = model.bert()->forward(
        pair.input_ids, pair.token_type_ids, pair.padded ? pair.attention_mask : torch::Tensor());
    TORCH_CHECK(out.pooler_output.defined(),
                "classification needs a model with a pooler; this checkpoint has none");
    return model.classifier()(
        torch::dropout(out.pooler_output, model.classifier_dropout(), model.is_training()));
  }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    return ClassificationLoss(model.Logits(batch).to(torch::kFloat), batch.labels);
  }
};

TaskPtr Build(const TaskConfig& config) {
  if (config.type == "classification") return std::make_shared<CrossEncoderTask>(config);
  return std::make_shared<PairSoftmaxTask>(config);
}

}  // namespace

const LossKind& SoftmaxLossKind() {
  static const LossKind* const kKind = new LossKind{
      "softmax", {"nli", "classification"}, {"num_labels"}, /*embeddings=*/false, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
