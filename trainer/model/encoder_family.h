// What the model families (trainer/model/model_family.h) of the shared encoder have in common:
// model_type, architecture, config.json read and written in the family's dialect
// (trainer/model/bert_config.h's ConfigDialect) and the encoder's parameters its config implies.
// (A folder's tokenizer is its files', not its family's: trainer/data/tokenizer_folder.h.) A
// family's module derives from EncoderFamily and adds its weights' names in checkpoints
// (FileName is the module name unless it says otherwise), and where its config.json's keys are
// not BERT's, its own config (DistilBERT).
// Thread-safety: immutable.
#ifndef TUNEFLEET_TRAINER_MODEL_ENCODER_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_ENCODER_FAMILY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/model_family.h"

namespace tunefleet {
namespace trainer {

class EncoderFamily : public ModelFamily {
 public:
  explicit EncoderFamily(const ConfigDialect& dialect);

  absl::string_view model_type() const final { return dialect_.model_type; }
  absl::string_view architecture() const final { return dialect_.architecture; }
  // In the dialect's BERT keys; a family whose config.json has other keys (DistilBERT) and
  // whose transformers class has no pooler overrides these.
  absl::StatusOr<BertConfig> ParseConfig(absl::string_view json,
                                         absl::string_view path) const override;
  std::string ConfigToJson(const BertConfig& config, const std::string& dtype) const override;
  ParameterShapeList ParameterShapes(const BertConfig& config, bool with_pooler) const override;
  std::string FileName(absl::string_view module_name) const override;

 protected:
  // A checkpoint's tensor name without the task models' `prefix` ("bert.", as BertForMaskedLM
  // saves it); "" for the buffer embeddings.position_ids that older transformers saved.
  static std::string WithoutPrefix(absl::string_view file_name, absl::string_view prefix);

 private:
  ConfigDialect dialect_;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_ENCODER_FAMILY_H_
