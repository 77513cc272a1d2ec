#include "trainer/tasks/cached_mnrl_loss.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include <torch/autograd.h>

#include "absl/strings/str_cat.h"
#include "trainer/model/autocast.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/loss_settings.h"
#include "trainer/tasks/mnrl_loss.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
TextBatch MiniBatchRows(const TextBatch& t, int64_t begin, int64_t n) {
  TextBatch out;
  const torch::Tensor mask = t.attention_mask.narrow(0, begin, n);
  const int64_t len = std::max<int64_t>(1, mask.sum(1).max().item<int64_t>());
  out.input_ids = t.input_ids.narrow(0, begin, n).narrow(1, 0, len);
  if (t.token_type_ids.defined()) {
    out.token_type_ids = t.token_type_ids.narrow(0, begin, n).narrow(1, 0, len);
  }
  out.attention_mask = mask.narrow(1, 0, len);
  out.padded = t.padded && !out.attention_mask.all().item<bool>();
  out.prompt_length = t.prompt_length;
  return out;
}

torch::Tensor GradCacheLoss(
    TaskModelImpl& model, const std::vector<TextBatch>& texts, int64_t n, int64_t mini_batch,
    const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& loss_of) {
  std::vector<torch::Tensor> reps;
  {
    torch::NoGradGuard no_grad;
    for (const TextBatch& t : texts) {
      std::vector<torch::Tensor> parts;
      for (int64_t b = 0; b < n; b += mini_batch) {
        parts.push_back(model.Embed(MiniBatchRows(t, b, std::min(mini_batch, n - b))));
      }
      reps.push_back(torch::cat(parts));
    }
  }
  if (!torch::GradMode::is_enabled()) return loss_of(reps);
  for (torch::Tensor& r : reps) r.requires_grad_(true);
  const torch::Tensor loss = loss_of(reps);
  const std::vector<torch::Tensor> grads = torch::autograd::grad({loss}, reps);
  torch::Tensor out = loss.detach().requires_grad_(true);
  const torch::DeviceType device = texts.front().input_ids.device().type();
  const Precision precision = CurrentAutocast(device);
  TaskModelImpl* const m = &model;
  const int64_t mini = mini_batch;
  out.register_hook([m, texts, grads, device, precision, n, mini](const torch::Tensor& g) {
    torch::AutoGradMode grad_mode(true);  // the engine runs hooks without gradient mode
    AutocastScope autocast(device, precision);
    for (size_t c = 0; c < texts.size(); ++c) {
      for (int64_t b = 0; b < n; b += mini) {
        const int64_t rows = std::min(mini, n - b);
        const torch::Tensor e = m->Embed(MiniBatchRows(texts[c], b, rows)).to(torch::kFloat);
        const torch::Tensor cached = grads[c].narrow(0, b, rows).to(torch::kFloat);
        ((e * cached).sum() * g).backward();
      }
    }
  });
  return out;
}

namespace {

class CachedMnrlTask : public EmbeddingTask {
 public:
  explicit CachedMnrlTask(const TaskConfig& config)
      : EmbeddingTask(config),
        scale_(LossScaleOf(config)),
        mini_batch_(MiniBatchOf(config)),
        gather_(config.mnrl_gather) {}
  bool in_batch_negatives() const override { return true; }
  bool multi_pass_backward() const override { return true; }
  int64_t activation_texts() const override { return mini_batch_; }
  torch::Tensor LossOn(TaskModelImpl& model, const std::vector<torch::Tensor>& e,
                       const TaskBatch&) const override {
    return MnrlOn(model, e, scale_, gather_);
  }

  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    return GradCacheLoss(model, Texts(batch), batch.size, mini_batch_,
                         [&](const std::vector<torch::Tensor>& reps) {
                           return MatryoshkaLossOn(model, reps, batch);
                         });
  }

 protected:
  std::string DescribeLoss() const override {
    return DescribeMnrl("CachedMultipleNegativesRankingLoss", scale_, gather_,
                        absl::StrCat(", mini-batch ", mini_batch_));
  }

 private:
  double scale_;
  int64_t mini_batch_;
  bool gather_;
};

TaskPtr Build(const TaskConfig& config) { return std::make_shared<CachedMnrlTask>(config); }

}  // namespace

const LossKind& CachedMnrlLossKind() {
  static const LossKind* const kKind = new LossKind{"cached_mnrl",
                                                    {"mnrl"},
                                                    {"loss_scale", "cached_mini_batch"},
                                                    true,
                                                    &ParseLossScaleAndMiniBatch,
                                                    &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
