#include "trainer/tasks/mnrl_task.h"

#include <memory>

#include "trainer/distributed/all_gather.h"
#include "trainer/tasks/losses.h"
#include "trainer/tasks/task_model.h"

namespace tunefleet {
namespace trainer {
namespace {

class MnrlTask : public Task {
 public:
  explicit MnrlTask(bool gather) : gather_(gather) {}
  std::string type() const override { return "mnrl"; }
  std::string Describe() const override {
    return gather_ ? "MultipleNegativesRankingLoss (scale 20, positives gathered from all ranks)"
                   : "MultipleNegativesRankingLoss (scale 20, this rank's positives)";
  }
  DataKind train_data() const override { return {"mnrl", RowTarget::kPositivePairs, false}; }
  // Scored as sts: the evaluation file needs scores.
  DataKind eval_data() const override { return {"sts", RowTarget::kScore, false}; }
  Evaluation evaluation() const override { return Evaluation::kSimilarity; }
  torch::Tensor Loss(TaskModelImpl& model, const TaskBatch& batch) const override {
    const auto [anchors, positives] = model.EmbedPair(batch.first, batch.second);
    comm::ProcessGroup* group = model.process_group();
    if (group != nullptr && gather_ && group->size() > 1) {
      return MultipleNegativesRankingLoss(anchors, AllGatherWithGrad(group, positives),
                                          kMnrlScale, group->rank() * anchors.size(0));
    }
    return MultipleNegativesRankingLoss(anchors, positives);
  }

 private:
  bool gather_;
};

TaskPtr Build(const TaskConfig& config) { return std::make_shared<MnrlTask>(config.mnrl_gather); }

}  // namespace

const LossKind& MnrlLossKind() {
  static const LossKind* const kKind = new LossKind{"mnrl", {}, nullptr, &Build};
  return *kKind;
}

}  // namespace trainer
}  // namespace tunefleet
