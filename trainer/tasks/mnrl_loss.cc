#include "trainer/tasks/mnrl_loss.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/distributed/all_gather.h"
#include "trainer/tasks/cross_encoder_mnrl_loss.h"
#include "trainer/tasks/embedding_task.h"
#include "trainer/tasks/loss_settings.h"
#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {

torch::Tensor MnrlOn(TaskModelImpl& model, const std::vector<torch::Tensor>& embeddings,
                     double scale, bool gather) {
  const torch::Tensor& anchors = embeddings[0];
  std::vector<torch::Tensor> candidates(embeddings.begin() + 1, embeddings.end());
  comm::ProcessGroup* group = model.process_group();
  int64_t offset = 0;
  if (group != nullptr && gather && group->size() > 1) {
    for (torch::Tensor& c : candidates) c = AllGatherWithGrad(group, c);
    offset = group->rank() * anchors.size(0);
  }
  return MultipleNegativesRankingLoss(
      anchors, candidates.size() == 1 ? candidates[0] : torch::cat(candidates), scale, offset);
}

std::string DescribeMnrl(const char* name, double scale, bool gather, const std::string& extra) {
  return absl::StrCat(name, " (scale ", ShortestNumber(scale),
                      gather ? ", candidates gathered from all ranks" : ", this rank's candidates",
                      extra, ")");
}

namespace {

class MnrlTask : public EmbeddingTask {
 public:
  explicit MnrlTask(const TaskConfig& config)
      : EmbeddingTask(config), scale_(LossScaleOf(config)), gather_(config.mnrl_gather) {}
  bool in_batch_negatives() const override { return true; }
  torch::Tensor LossOn(TaskModelImpl& model, const std::vector<torch::Tensor>& e,
                       const TaskBatch&) const override {
    return MnrlOn(model, e, scale_, gather_);
  }

 protected:
  std::string DescribeLoss() const override {
    return DescribeMnrl("MultipleNegativesRankingLoss", scale_, gather_);
  }

 private:
  double scale_;
  bool gather_;
};

TaskPtr Build(const TaskConfig& config) {
  if (config.type == "cross_encoder_mnrl") return BuildCrossEncoderMnrl(config);
  return std::make_shared<MnrlTask>(config);
}

// task.loss_scale; for a cross-encoder also task.num_negatives, with its own defaults.
absl::StatusOr<std::shared_ptr<const TaskSettings>> Parse(const ConfigMap& task,
                                                          const std::string& type) {
  if (type == "cross_encoder_mnrl") return ParseCrossEncoderMnrl(task);
  if (task.Has("num_negatives")) {
    return task.Error("num_negatives",
                      "only applies to a cross-encoder's task.loss mnrl (the "
                      "bi-encoder's takes every in-batch candidate)");
  }
  return ParseLossScale(task);
}

}  // namespace

const LossKind& MnrlLossKind() {
  static const LossKind* const kKind = new LossKind{"mnrl",
                                                    {"mnrl", "cross_encoder_mnrl"},
                                                    {"loss_scale", "num_negatives"},
                                                    true,
                                                    nullptr,
                                                    &Build,
                                                    &Parse};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
