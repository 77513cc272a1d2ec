// The shared encoder's config (trainer/model/bert_model.h builds from it), with the family that
// made it; and the families' config.json, transformers' BertConfig and its relatives
// (RobertaConfig, MPNetConfig): the fields the encoder needs, read from and written to a model
// folder's config.json in a family's dialect (ConfigDialect), and the parameter names and shapes
// they imply. The model families (trainer/model/encoder_family.h) wrap these functions; other code
// reads config.json through trainer/model/model_family_registry.h, whose model_type picks the
// family.
//   - Reading: the fields below are required (type_vocab_size and relative_attention_num_buckets
//     only where the dialect has them); a missing or malformed one is a one-line error naming
//     config.json and the key. position_embedding_type, when present, must be "absolute".
//     (model_type is the registry's to check.)
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
#include "trainer/io/hf_folder_util.h"

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
  // 0: no token_type_embeddings (MPNet). At most 1: the token_type_ids given are ignored (taken
  // as zeros, as a RoBERTa under a BertTokenizer needs).
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  int64_t pad_token_id = 0;
  // RoBERTa / MPNet: a token's position id is pad_token_id + its count among the non-padding
  // tokens (input_ids != pad_token_id) so far, padding's is pad_token_id (transformers'
  // create_position_ids_from_input_ids); BERT (false): 0, 1, 2, ...
  bool padded_position_ids = false;
  // MPNet: rows of encoder.relative_attention_bias (relative position buckets x heads), whose
  // bias is added to every layer's attention scores; 0: none.
  int64_t relative_attention_num_buckets = 0;
  // The config.json this came from ("" when made in code): keys this struct does not model are
  // written back unchanged.
  std::string source_json;
};

// The longest input the encoder takes: max_position_embeddings, less pad_token_id + 1 with
// padded position ids.
int64_t MaxSequenceLength(const BertConfig& config);

// How a family's config.json differs from BERT's.
struct ConfigDialect {
  const char* model_type;            // set on the parsed config, and written
  const char* architecture;          // written as "architectures": [architecture]
  bool token_types = true;           // type_vocab_size is a key; else it is 0 (MPNet)
  bool padded_position_ids = false;  // RoBERTa, MPNet
  bool relative_attention = false;   // relative_attention_num_buckets is a key (MPNet)
};
inline constexpr ConfigDialect kBertDialect = {kBertModelType, "BertModel"};

// The activation `key` of config.json's object `j` (hidden_act; DistilBERT's activation): one
// the shared encoder has, else a one-line error naming `path` and the key.
absl::StatusOr<std::string> ParseActivation(const Json& j, absl::string_view path, const char* key);
// Parses config.json text in `dialect`; `path` names the file in errors.
absl::StatusOr<BertConfig> ParseEncoderConfig(absl::string_view json, absl::string_view path,
                                              const ConfigDialect& dialect);
// config.json text as transformers writes it (sorted keys, indent 2) in `dialect`; `dtype`
// ("float32") updates dtype/torch_dtype if present.
std::string EncoderConfigToJson(const BertConfig& config, const std::string& dtype,
                                const ConfigDialect& dialect);
// For a family that writes config.json itself: config.source_json's object (or an empty one)
// with "architectures" and "model_type" set as `dialect` has them; the family sets its keys, then
// ConfigJsonText sets dtype / torch_dtype (whichever is there, else torch_dtype) and gives the
// text as transformers writes it.
Json SourceConfigJson(const BertConfig& config, const ConfigDialect& dialect);
std::string ConfigJsonText(Json j, const std::string& dtype);
// BERT's: the above in kBertDialect.
absl::StatusOr<BertConfig> ParseBertConfig(absl::string_view json, absl::string_view path);
std::string BertConfigToJson(const BertConfig& config, const std::string& dtype = "float32");

// The shared encoder's parameter names and shapes, in transformers' order: BertModel's, without
// embeddings.token_type_embeddings when type_vocab_size is 0, with
// encoder.relative_attention_bias after the layers when relative_attention_num_buckets is set.
std::vector<std::pair<std::string, std::vector<int64_t>>> BertParameterShapes(
    const BertConfig& config, bool with_pooler = true);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_MODEL_BERT_CONFIG_H_
