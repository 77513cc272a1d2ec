// The model family registry's one list: every config.json model_type the trainer reads, one
// entry per family module (trainer/model/model_family.h). The first is the family of a
// config.json without model_type (older BERT folders). Adding a family adds one line to
// all_families.cc; nothing registers itself (static libraries would drop a self-registering
// object nobody references).
//
// Thread-safety: the list is immutable once made (made on first use, thread-safe).
#ifndef TUNEFLEET_TRAINER_MODEL_ALL_FAMILIES_H_
#define TUNEFLEET_TRAINER_MODEL_ALL_FAMILIES_H_

#include <vector>

#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

const std::vector<const ModelFamily*>& AllModelFamilies();

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_ALL_FAMILIES_H_
