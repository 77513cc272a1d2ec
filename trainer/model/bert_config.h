// The shared encoder's config (trainer/model/bert_model.h builds from it), with the family that
// made it; and BERT's config.json, transformers' BertConfig: the fields a BERT encoder needs, read
// from and written to a model folder's config.json, and the BertModel parameter names and shapes
// it implies. The BERT model family (trainer/model/bert_family.h) wraps these functions; other
// code reads config.json through trainer/model/model_family_registry.h, whose model_type picks
// the family.
//   - Reading: the fields below are required; a missing or malformed one is a one-line error
//     naming config.json and the key. position_embedding_type, when present, must be
//     "absolute". (model_type is the registry's to check.)
//   - Writing: as transformers writes it, with the keys this struct does not model kept.
// Thread-safety: stateless.
#ifndef TUNEFLEET_TRAINER_MODEL_BERT_CONFIG_H_
#define TUNEFLEET_TRAINER_MODEL_BERT_CONFIG_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// config.json's model_type of BERT.
inline constexpr char kBertModelType[] = "bert";

struct BertConfig {
  // The model family that parsed this config (its config.json model_type); configs made in code
  // are BERT's. trainer/model/model_family_registry.h's FamilyOf finds the family.
  std::string model_type = kBertModelType;
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // gelu (erf), gelu_new / gelu_pytorch_tanh, relu, silu
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t pad_token_id = 0;
  // The config.json this came from ("" when made in code): keys this struct does not model are
  // written back unchanged.
  std::string source_json;
};

// Parses config.json text; `path` names the file in errors.
absl::StatusOr<BertConfig> ParseBertConfig(absl::string_view json, absl::string_view path);
// config.json text as transformers writes it (sorted keys, indent 2), with "architectures":
// ["BertModel"] and "model_type": "bert"; `dtype` ("float32") updates dtype/torch_dtype if present.
std::string BertConfigToJson(const BertConfig& config, const std::string& dtype = "float32");

// BertModel's state_dict names and shapes, in transformers' order.
std::vector<std::pair<std::string, std::vector<int64_t>>> BertParameterShapes(
    const BertConfig& config, bool with_pooler = true);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_BERT_CONFIG_H_
