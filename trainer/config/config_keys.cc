#include "trainer/config/config_keys.h"

namespace tunefleet {
namespace trainer {

const std::vector<std::string>& TrainerConfigKeys() {
  static const std::vector<std::string>* const kKeys = [] {
    auto* keys = new std::vector<std::string>;
    for (const ConfigField& f : TrainerConfigFields()) keys->push_back(f.key);
    return keys;
  }();
  return *kKeys;
}

}  // namespace trainer
}  // namespace tunefleet
