#include "trainer/tasks/all_losses.h"

#include "trainer/tasks/classification_task.h"
#include "trainer/tasks/contrastive_loss.h"
#include "trainer/tasks/mnrl_task.h"
#include "trainer/tasks/nli_task.h"
#include "trainer/tasks/sts_task.h"

namespace tunefleet {
namespace trainer {

const std::vector<const LossKind*>& AllLossKinds() {
  static const auto* const kKinds = new std::vector<const LossKind*>{
      &StsLossKind(),
      &MnrlLossKind(),
      &NliLossKind(),
      &ClassificationLossKind(),
      &ContrastiveLossKind(),
  };
  return *kKinds;
}

}  // namespace trainer
}  // namespace tunefleet
