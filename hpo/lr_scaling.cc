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

double EffectiveLr(const SweepConfig& config, const std::map<std::string, double>& params) {
  auto accum = params.find("train.grad_accum");
  return EffectiveLr(
      config.lr_scaling, params.at("lr"), static_cast<int64_t>(params.at("batch_size")),
      config.gpus_per_trial,
      accum != params.end() ? static_cast<int64_t>(accum->second) : config.trainer.grad_accum);
}

}  // namespace hpo
}  // namespace tunefleet
