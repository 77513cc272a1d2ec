// train.devices (trainer/config/config_schema.h, TrainConfig::devices and gpu_ids): -1 (every
// local GPU), N >= 1 ranks, or a list of distinct GPU ids, checked against the machine's GPUs when
// they are known. Errors name the file, the line and the key (ConfigMap::Error).
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_CONFIG_DEVICES_KEY_H_
#define TUNEFLEET_TRAINER_CONFIG_DEVICES_KEY_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "common/yaml_config.h"

namespace tunefleet {
namespace trainer {

// Reads `m`'s "devices" into *devices (a list: its length) and *gpu_ids (a list's ids, else left
// as is); with `local_gpus` >= 0 (the machine's GPUs; < 0: unknown) also checks what this machine
// has: GPU ids on a machine without GPUs, an id it lacks, more ranks than GPUs.
absl::Status ReadDevicesKey(const ConfigMap& m, int local_gpus, int64_t* devices,
                            std::vector<int64_t>* gpu_ids);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_CONFIG_DEVICES_KEY_H_
