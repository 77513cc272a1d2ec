#include "trainer/tasks/all_losses.h"

#include "trainer/tasks/bce_loss.h"
#include "trainer/tasks/cached_mnrl_loss.h"
#include "trainer/tasks/contrastive_loss.h"
#include "trainer/tasks/cosent_loss.h"
#include "trainer/tasks/cosine_loss.h"
#include "trainer/tasks/gist_loss.h"
#include "trainer/tasks/listwise_losses.h"
#include "trainer/tasks/margin_mse_loss.h"
#include "trainer/tasks/mnrl_loss.h"
#include "trainer/tasks/mse_loss.h"
#include "trainer/tasks/softmax_loss.h"
#include "trainer/tasks/symmetric_mnrl_loss.h"
#include "trainer/tasks/triplet_loss.h"

namespace tunefleet {
namespace trainer {

const std::vector<const LossKind*>& AllLossKinds() {
  static const auto* const kKinds = new std::vector<const LossKind*>{
      &CosineLossKind(),     &CoSentLossKind(),        &AnglELossKind(),       &MnrlLossKind(),
      &CachedMnrlLossKind(), &SoftmaxLossKind(),       &ContrastiveLossKind(), &BceLossKind(),
      &CeLossKind(),         &SymmetricMnrlLossKind(), &TripletLossKind(),     &MarginMseLossKind(),
      &MseLossKind(),        &LambdaLossKind(),        &ListNetLossKind(),     &GistLossKind(),
      &CachedGistLossKind(),
  };
  return *kKinds;
}

}  // namespace trainer
}  // namespace tunefleet
