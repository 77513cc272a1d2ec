// The keys of the trainer YAML contract (trainer/config/config_schema.h's table, which
// trainer/config/train_config.h reads by) and its batch size limit: the small interface that hpo
// names trainer keys by (hpo/config/sweep_parameters.h), without linking the trainer's config
// reader. Thread-safety: the list is built once, on first use, and immutable after.
#ifndef TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_
#define TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_

#include <string>
#include <vector>

#include "trainer/config/config_schema.h"  // kMaxBatchSize

namespace tunefleet {
namespace trainer {

// Every key of the trainer YAML, dotted ("model.path", ..., "output.checkpoint_every_s"), in
// the schema's order: what a sweep may search (hpo/config/sweep_parameters.h).
const std::vector<std::string>& TrainerConfigKeys();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_CONFIG_KEYS_H_
