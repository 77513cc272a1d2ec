#include "trainer/model/distilbert_family.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "trainer/io/hf_folder_util.h"
#include "trainer/model/bert_config.h"
#include "trainer/model/encoder_family.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr ConfigDialect kDistilBertDialect = {"distilbert", "DistilBertModel",
                                              /*token_types=*/false,
                                              /*padded_position_ids=*/false};

// DistilBertConfig's numeric keys and the shared encoder's fields, in the order they are read
// (the first bad one is reported); activation is read after hidden_dim.
struct IntKey {
  const char* key;
  int64_t BertConfig::*field;
  int64_t min;
};
constexpr IntKey kSizeKeys[] = {{"vocab_size", &BertConfig::vocab_size, 1},
                                {"dim", &BertConfig::hidden_size, 1},
                                {"n_layers", &BertConfig::num_hidden_layers, 1},
                                {"n_heads", &BertConfig::num_attention_heads, 1},
                                {"hidden_dim", &BertConfig::intermediate_size, 1}};
constexpr IntKey kPositionKey = {"max_position_embeddings", &BertConfig::max_position_embeddings,
                                 1};
constexpr IntKey kPadKey = {"pad_token_id", &BertConfig::pad_token_id, 0};
constexpr std::pair<const char*, double BertConfig::*> kDropoutKeys[] = {
    {"dropout", &BertConfig::hidden_dropout_prob},
    {"attention_dropout", &BertConfig::attention_probs_dropout_prob}};
constexpr char kSinusoidalKey[] = "sinusoidal_pos_embds";

// Inside a layer: DistilBertModel's name, the shared encoder's (BertModel's) name.
constexpr char kFileLayers[] = "transformer.layer.";
constexpr char kModuleLayers[] = "encoder.layer.";
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"attention.q_lin.", "attention.self.query."},
    {"attention.k_lin.", "attention.self.key."},
    {"attention.v_lin.", "attention.self.value."},
    {"attention.out_lin.", "attention.output.dense."},
    {"sa_layer_norm.", "attention.output.LayerNorm."},
    {"ffn.lin1.", "intermediate.dense."},
    {"ffn.lin2.", "output.dense."},
    {"output_layer_norm.", "output.LayerNorm."},
};

// A layer's tensor `name` (FROM_LAYERS.N.rest) renamed to the other side's (TO_LAYERS.N.rest'),
// from file names to module names or back; "" when it is no layer tensor of the `from` side.
std::string RenameLayerTensor(absl::string_view name, bool to_module) {
  if (!absl::ConsumePrefix(&name, to_module ? kFileLayers : kModuleLayers)) return "";
  const size_t dot = name.find('.');
  if (dot == absl::string_view::npos) return "";
  const absl::string_view index = name.substr(0, dot + 1);
  absl::string_view rest = name.substr(dot + 1);
  for (const auto& [file, module] : kLayerNames) {
    if (absl::ConsumePrefix(&rest, to_module ? file : module)) {
      return absl::StrCat(to_module ? kModuleLayers : kFileLayers, index, to_module ? module : file,
                          rest);
    }
  }
  return "";
}

class DistilBertFamilyImpl : public EncoderFamily {
 public:
  DistilBertFamilyImpl() : EncoderFamily(kDistilBertDialect) {}

  absl::StatusOr<BertConfig> ParseConfig(absl::string_view json,
                                         absl::string_view path) const override {
    ASSIGN_OR_RETURN(Json j, ParseJsonFile(path, std::string(json)));
    if (!j.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON object"));
    }
    BertConfig c;
    c.model_type = kDistilBertDialect.model_type;
    c.source_json = std::string(json);
    c.type_vocab_size = 0;
    c.layer_norm_eps = 1e-12;
    if (auto it = j.find(kSinusoidalKey); it != j.end() && *it != false) {
      return JsonKeyError(
          path, kSinusoidalKey,
          absl::StrCat("must be false (only learned position embeddings), got ", JsonBrief(*it)));
    }
    for (const IntKey& k : kSizeKeys) {
      RETURN_IF_ERROR(GetJsonInt(j, path, k.key, k.min, &(c.*(k.field))));
    }
    ASSIGN_OR_RETURN(c.hidden_act, ParseActivation(j, path, "activation"));
    RETURN_IF_ERROR(
        GetJsonInt(j, path, kPositionKey.key, kPositionKey.min, &(c.*(kPositionKey.field))));
    for (const auto& [key, field] : kDropoutKeys) {
      RETURN_IF_ERROR(GetJsonDouble(j, path, key, 0.0, 1.0, &(c.*field)));
    }
    RETURN_IF_ERROR(GetJsonInt(j, path, kPadKey.key, kPadKey.min, &(c.*(kPadKey.field))));
    if (c.hidden_size % c.num_attention_heads != 0) {
      return JsonKeyError(
          path, "n_heads",
          absl::StrCat("(", c.num_attention_heads, ") must divide dim (", c.hidden_size, ")"));
    }
    if (c.pad_token_id >= c.vocab_size) {
      return JsonKeyError(
          path, kPadKey.key,
          absl::StrCat("(", c.pad_token_id, ") must be < vocab_size (", c.vocab_size, ")"));
    }
    return c;
  }

  std::string ConfigToJson(const BertConfig& c, const std::string& dtype) const override {
    Json j = SourceConfigJson(c, kDistilBertDialect);
    for (const IntKey& k : kSizeKeys) j[k.key] = c.*(k.field);
    j["activation"] = c.hidden_act;
    j[kPositionKey.key] = c.max_position_embeddings;
    for (const auto& [key, field] : kDropoutKeys) j[key] = c.*field;
    j[kPadKey.key] = c.pad_token_id;
    j[kSinusoidalKey] = false;
    return ConfigJsonText(std::move(j), dtype);
  }

  // DistilBertModel has no pooler: never one, whatever `with_pooler` says.
  ParameterShapeList ParameterShapes(const BertConfig& config, bool) const override {
    return EncoderFamily::ParameterShapes(config, /*with_pooler=*/false);
  }

  std::string ModuleName(absl::string_view file_name) const override {
    const std::string name = WithoutPrefix(file_name, "distilbert.");
    // A BertModel layer name in a DistilBERT checkpoint is no DistilBertModel tensor.
    if (absl::StartsWith(name, kModuleLayers)) {
      return absl::StrCat("(not DistilBertModel's) ", name);
    }
    const std::string module = RenameLayerTensor(name, /*to_module=*/true);
    return module.empty() ? name : module;
  }
  std::string FileName(absl::string_view module_name) const override {
    const std::string file = RenameLayerTensor(module_name, /*to_module=*/false);
    return file.empty() ? std::string(module_name) : file;
  }
  // DistilBertForSequenceClassification: distilbert -> pre_classifier, ReLU, dropout and
  // classifier on the first token.
  absl::string_view classifier_architecture() const override {
    return "DistilBertForSequenceClassification";
  }
  absl::string_view base_model_prefix() const override { return "distilbert."; }
  ClassifierHead classifier_head() const override { return ClassifierHead::kPreClassifier; }
};

}  // namespace

const ModelFamily& DistilBertFamily() {
  static const DistilBertFamilyImpl* const kFamily = new DistilBertFamilyImpl();
  return *kFamily;
}

}  // namespace trainer
}  // namespace tunefleet
