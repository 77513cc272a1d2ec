#include "trainer/optim/loss_scaler.h"

namespace tunefleet {
namespace trainer {

void LossScaler::Update(bool found_inf) {
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    good_steps_ = 0;
    ++skipped_;
    return;
  }
  if (++good_steps_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    good_steps_ = 0;
  }
}

}  // namespace trainer
}  // namespace tunefleet
