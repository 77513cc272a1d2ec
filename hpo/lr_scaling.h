// Linear learning-rate scaling (Goyal et al. 2017; seed 000: lr = base_lr * global_batch / 32):
//   lr_effective = lr * batch_size * ranks * grad_accum / base_batch   (rule: linear)
//   lr_effective = lr                                                 (rule: none)
// where batch_size is per rank, so batch_size * ranks * grad_accum is the global batch.
#ifndef TUNEFLEET_HPO_LR_SCALING_H_
#define TUNEFLEET_HPO_LR_SCALING_H_

#include <cstdint>
#include <map>
#include <string>

#include "hpo/config/sweep_config.h"

namespace tunefleet {
namespace hpo {

double EffectiveLr(const LrScalingSpec& scaling, double lr, int64_t batch_size, int64_t ranks,
                   int64_t grad_accum);
// The sweep's own ranks (gpus_per_trial) and grad_accum (from its trainer config).
double EffectiveLr(const SweepConfig& config, double lr, int64_t batch_size);
// A trial's: its lr and batch_size, and its train.grad_accum when that is searched too.
double EffectiveLr(const SweepConfig& config, const std::map<std::string, double>& params);

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_LR_SCALING_H_
