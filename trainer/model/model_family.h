// A model family: one kind of Hugging Face encoder folder (config.json's `model_type`), as the
// trainer reads, builds and writes it. Each family is one module
// (trainer/model/NAME_family.{h,cc}: bert, roberta (with xlm-roberta), mpnet, distilbert) listed
// once in trainer/model/all_families.cc; everything else asks
// trainer/model/model_family_registry.h and compares no model_type itself. The families derive
// from trainer/model/encoder_family.h, which does the config (in the family's ConfigDialect) and
// the parameters; a family adds the names of its checkpoints' tensors (and, where config.json's
// keys are not BERT's, its own config: DistilBERT). The tokenizer is not the family's: a folder's
// files say which it is (a RoBERTa encoder may come with a BertTokenizer),
// trainer/data/tokenizer_folder.h.
//
// What a family decides:
//   - its config: config.json's keys parsed into the shared encoder's config (BertConfig, which
//     trainer/model/bert_model.h builds: embeddings, layers, pooler), and written back as
//     transformers writes it. The config it returns carries the family's model_type, so a model
//     built from it is saved by the same family. How the embeddings and attention are built
//     (position ids after the padding id, no or one token type, a relative position bias) is
//     decided by the fields the family sets there.
//   - its weights' names: the encoder's parameters (module names and shapes), and the mapping
//     between those and the names in a checkpoint's safetensors files, both ways.
// This interface does not link LibTorch: `trainer tokenize` and hpo use it too.
//
// Thread-safety: a family is immutable and stateless; every method may run concurrently.
#ifndef TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_H_
#define TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "trainer/model/bert_config.h"

namespace tunefleet {
namespace trainer {

// Parameter names (the encoder's module names) with their shapes, in transformers' order.
using ParameterShapeList = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// The sequence classification head of a family's *ForSequenceClassification class (a
// cross-encoder's); trainer/model/classifier_heads.h builds it and names its tensors.
enum class ClassifierHead {
  kNone,  // no cross-encoder of the family
  // BertForSequenceClassification: the pooler's output -> dropout -> classifier (Linear H -> K).
  kPooler,
  // RobertaClassificationHead, MPNetClassificationHead: the first token's state -> dropout ->
  // classifier.dense (H -> H) -> tanh -> dropout -> classifier.out_proj (H -> K); no pooler.
  kDenseTanh,
  // DistilBertForSequenceClassification: the first token's state -> pre_classifier (H -> H) ->
  // ReLU -> dropout (seq_classif_dropout) -> classifier (H -> K).
  kPreClassifier,
};

class ModelFamily {
 public:
  virtual ~ModelFamily() = default;

  // config.json's `model_type` for this family ("bert"): the registry's key.
  virtual absl::string_view model_type() const = 0;
  // The transformers class its weights are named after ("BertModel"), for messages.
  virtual absl::string_view architecture() const = 0;

  // Parses config.json's text (`path` names it in errors: one line naming the file and the key).
  // The result's model_type is this family's.
  virtual absl::StatusOr<BertConfig> ParseConfig(absl::string_view json,
                                                 absl::string_view path) const = 0;
  // config.json's text as transformers writes it for this family; `dtype` ("float32",
  // "bfloat16", "float16") is the weights' dtype.
  virtual std::string ConfigToJson(const BertConfig& config, const std::string& dtype) const = 0;

  // The encoder's parameters (module names, as trainer/model/bert_model.h registers them) and
  // shapes; the pooler's last when `with_pooler` and the family's transformers class has one
  // (DistilBertModel has none). Names starting "pooler." are the only optional ones (a checkpoint
  // saved without pooling layer).
  virtual ParameterShapeList ParameterShapes(const BertConfig& config,
                                             bool with_pooler = true) const = 0;
  // The module name a tensor named `file_name` in a checkpoint loads into; "" for a tensor the
  // family ignores (a saved buffer). A name that is no parameter of ParameterShapes comes back
  // as something that is not either, and is reported as an unexpected key.
  virtual std::string ModuleName(absl::string_view file_name) const = 0;
  // The name the parameter `module_name` is saved under, as the family's transformers class
  // saves it (ModuleName(FileName(n)) == n).
  virtual std::string FileName(absl::string_view module_name) const = 0;

  // Cross-encoders (model.kind: cross_encoder): the transformers class with the family's
  // sequence classification head ("BertForSequenceClassification"), the prefix of the encoder's
  // tensors in its files ("bert.") and the head; "" and kNone for a family whose cross-encoder
  // tunefleet does not build. The head's tensors are named as the class names them
  // (trainer/model/classifier_heads.h).
  virtual absl::string_view classifier_architecture() const { return ""; }
  virtual absl::string_view base_model_prefix() const { return ""; }
  virtual ClassifierHead classifier_head() const { return ClassifierHead::kNone; }
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_MODEL_FAMILY_H_
