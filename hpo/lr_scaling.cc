#include "hpo/lr_scaling.h"

namespace tunefleet {
namespace hpo {

double EffectiveLr(const LrScalingSpec& scaling, double lr, int64_t batch_size, int64_t ranks,
                   int64_t grad_accum) {
  if (scaling.rule != "linear") return lr;
  const double global_batch = static_cast<double>(batch_size) * ranks * grad_accum;
  return lr * global_batch / static_cast<double>(scaling.base_batch);
}

double EffectiveLr(const SweepConfig& config, double lr, int64_t batch_size) {
  return EffectiveLr(config.lr_scaling, lr, batch_size, config.gpus_per_trial,
                     config.trainer.grad_accum);
}

}  // namespace hpo
}  // namespace tunefleet
