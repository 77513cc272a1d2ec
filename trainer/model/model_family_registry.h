// The model family registry's look-ups over AllModelFamilies (trainer/model/all_families.h):
// config.json is read here, its `model_type` picking the family that parses it, and anything
// that needs a model's family (the folder loader and saver, the memory formula)
// finds it here, without comparing model_type itself.
//
// Thread-safety: pure functions over immutable families (the file system is shared).
#ifndef TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_REGISTRY_H_
#define TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

// The family whose model_type is `model_type`; null if none.
const ModelFamily* FindModelFamily(absl::string_view model_type);
// The registered model_types, in registry order.
std::vector<std::string> ModelTypes();

// The family of `config` (config.model_type, set by the family that parsed it; a config made in
// code is BERT's). A model_type no family has is a programming error (aborts).
const ModelFamily& FamilyOf(const BertConfig& config);

// config.json's text (`path` names it in errors) parsed by the family its "model_type" names;
// without model_type, by the first family (BERT). Errors are one line naming the file and the
// key: invalid JSON, not an object, a model_type no family reads ("PATH: key \"model_type\" is
// \"gpt2\", which no model family reads (known: bert, roberta, ...)"), or the family's own.
absl::StatusOr<BertConfig> ParseModelConfig(absl::string_view json, absl::string_view path);
// The file at `path` read (common/file_util.h's errors) and parsed as above.
absl::StatusOr<BertConfig> ReadModelConfig(const std::string& path);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_REGISTRY_H_
