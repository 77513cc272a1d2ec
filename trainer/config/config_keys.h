// The keys of the trainer YAML contract (trainer/config/train_config.h reads them) and its batch
// size limit: the small interface that hpo names trainer keys by (hpo/config/sweep_parameters.h),
// without linking the trainer's config reader. Thread-safety: constants.
#ifndef TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_
#define TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet {
namespace trainer {

// The largest train.batch_size (and searched batch size) accepted: 2^20 examples a rank.
inline constexpr int64_t kMaxBatchSize = int64_t{1} << 20;

// Every key of the trainer YAML, dotted ("model.path", ..., "output.checkpoint_every_s"), in
// train_config.h's order: what a sweep may search (hpo/config/sweep_parameters.h).
const std::vector<std::string>& TrainerConfigKeys();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_
