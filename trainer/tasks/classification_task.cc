#include "trainer/tasks/classification_task.h"

#include <memory>

#include "trainer/model/bert_model.h"
#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class ClassificationTask : public Task {
 public:
  std::string type() const override { return "classification"; }
  std::string Describe() const override {
    return "cross entropy (BertForSequenceClassification's head on the pooler)";
  }
  DataKind train_data() const override {
    return {"classification", RowTarget::kLabel, /*joint_pair=*/true};
  }
  Evaluation evaluation() const override { return Evaluation::kAccuracy; }
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

TaskPtr Build(const TaskConfig&) { return std::make_shared<ClassificationTask>(); }

}  // namespace

const LossKind& ClassificationLossKind() {
  static const LossKind* const kKind =
      new LossKind{"classification", {"num_labels"}, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
