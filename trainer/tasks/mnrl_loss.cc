#include "trainer/tasks/mnrl_loss.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "trainer/distributed/all_gather.h"
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

TaskPtr Build(const TaskConfig& config) { return std::make_shared<MnrlTask>(config); }

}  // namespace

const LossKind& MnrlLossKind() {
  static const LossKind* const kKind =
      new LossKind{"mnrl", {"mnrl"}, {"loss_scale"}, true, &ParseLossScale, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
