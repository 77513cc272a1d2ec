#include "trainer/model/bert_config.h"

#include <iterator>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "trainer/io/hf_folder_util.h"

namespace tunefleet {
namespace trainer {

namespace {

// config.json's numeric keys, in the order they are read (the first bad one is reported).
struct IntKey {
  const char* key;
  int64_t BertConfig::*field;
  int64_t min;
};
struct DoubleKey {  // each in [0, 1]
  const char* key;
  double BertConfig::*field;
};
constexpr IntKey kSizeKeys[] = {{"vocab_size", &BertConfig::vocab_size, 1},
                                {"hidden_size", &BertConfig::hidden_size, 1},
                                {"num_hidden_layers", &BertConfig::num_hidden_layers, 1},
                                {"num_attention_heads", &BertConfig::num_attention_heads, 1},
                                {"intermediate_size", &BertConfig::intermediate_size, 1}};
// After hidden_act; the last two where the dialect has them. transformers' MPNet buckets relative
// positions into 32 whatever its config says (MPNetEncoder.compute_position_bias), so fewer rows
// would be indexed out of range.
constexpr IntKey kPositionKey = {"max_position_embeddings", &BertConfig::max_position_embeddings,
                                 1};
constexpr IntKey kTypeKey = {"type_vocab_size", &BertConfig::type_vocab_size, 1};
constexpr IntKey kBucketKey = {"relative_attention_num_buckets",
                               &BertConfig::relative_attention_num_buckets, 32};
constexpr DoubleKey kDoubleKeys[] = {
    {"layer_norm_eps", &BertConfig::layer_norm_eps},
    {"hidden_dropout_prob", &BertConfig::hidden_dropout_prob},
    {"attention_probs_dropout_prob", &BertConfig::attention_probs_dropout_prob}};
constexpr IntKey kPadKey = {"pad_token_id", &BertConfig::pad_token_id, 0};

absl::Status GetInts(const Json& j, absl::string_view path, const IntKey* begin, const IntKey* end,
                     BertConfig& c) {
  for (const IntKey* k = begin; k != end; ++k) {
    RETURN_IF_ERROR(GetJsonInt(j, path, k->key, k->min, &(c.*(k->field))));
  }
  return absl::OkStatus();
}

// The integer keys after hidden_act, as `dialect` has them.
std::vector<IntKey> EmbeddingKeys(const ConfigDialect& dialect) {
  std::vector<IntKey> keys = {kPositionKey};
  if (dialect.token_types) keys.push_back(kTypeKey);
  if (dialect.relative_attention) keys.push_back(kBucketKey);
  return keys;
}

}  // namespace

absl::StatusOr<std::string> ParseActivation(const Json& j, absl::string_view path,
                                            const char* key) {
  auto act = j.find(key);
  if (act == j.end()) return JsonKeyError(path, key, "is missing");
  static const std::set<std::string> kActs = {"gelu", "gelu_new", "gelu_pytorch_tanh",
                                              "relu", "silu",     "swish"};
  if (!act->is_string() || kActs.count(act->get<std::string>()) == 0) {
    return JsonKeyError(
        path, key,
        absl::StrCat("must be one of ", absl::StrJoin(kActs, ", "), ", got ", JsonBrief(*act)));
  }
  return act->get<std::string>();
}

int64_t MaxSequenceLength(const BertConfig& c) {
  return c.padded_position_ids ? c.max_position_embeddings - c.pad_token_id - 1
                               : c.max_position_embeddings;
}

absl::StatusOr<BertConfig> ParseEncoderConfig(absl::string_view json, absl::string_view path,
                                              const ConfigDialect& dialect) {
  const std::string p(path);
  ASSIGN_OR_RETURN(Json j, ParseJsonFile(p, std::string(json)));
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(p, ": expected a JSON object"));
  }
  BertConfig c;
  c.model_type = dialect.model_type;
  c.source_json = std::string(json);
  c.padded_position_ids = dialect.padded_position_ids;
  if (!dialect.token_types) c.type_vocab_size = 0;
  if (auto it = j.find("position_embedding_type"); it != j.end() && *it != "absolute") {
    return JsonKeyError(p, "position_embedding_type",
                        absl::StrCat("must be \"absolute\", got ", JsonBrief(*it)));
  }
  RETURN_IF_ERROR(GetInts(j, p, std::begin(kSizeKeys), std::end(kSizeKeys), c));
  ASSIGN_OR_RETURN(c.hidden_act, ParseActivation(j, p, "hidden_act"));
  const std::vector<IntKey> embedding_keys = EmbeddingKeys(dialect);
  RETURN_IF_ERROR(
      GetInts(j, p, embedding_keys.data(), embedding_keys.data() + embedding_keys.size(), c));
  for (const DoubleKey& k : kDoubleKeys) {
    RETURN_IF_ERROR(GetJsonDouble(j, p, k.key, 0.0, 1.0, &(c.*(k.field))));
  }
  RETURN_IF_ERROR(GetInts(j, p, &kPadKey, &kPadKey + 1, c));
  if (c.layer_norm_eps <= 0) return JsonKeyError(p, "layer_norm_eps", "must be > 0");
  if (c.hidden_size % c.num_attention_heads != 0) {
    return JsonKeyError(p, "num_attention_heads",
                        absl::StrCat("(", c.num_attention_heads, ") must divide hidden_size (",
                                     c.hidden_size, ")"));
  }
  if (c.pad_token_id >= c.vocab_size) {
    return JsonKeyError(
        p, "pad_token_id",
        absl::StrCat("(", c.pad_token_id, ") must be < vocab_size (", c.vocab_size, ")"));
  }
  if (MaxSequenceLength(c) < 1) {
    return JsonKeyError(
        p, "max_position_embeddings",
        absl::StrCat("(", c.max_position_embeddings, ") must exceed pad_token_id + 1 (",
                     c.pad_token_id + 1, "): position ids start after the padding id"));
  }
  return c;
}

absl::StatusOr<BertConfig> ParseBertConfig(absl::string_view json, absl::string_view path) {
  return ParseEncoderConfig(json, path, kBertDialect);
}

std::string EncoderConfigToJson(const BertConfig& c, const std::string& dtype,
                                const ConfigDialect& dialect) {
  Json j = SourceConfigJson(c, dialect);
  for (const IntKey& k : kSizeKeys) j[k.key] = c.*(k.field);
  for (const IntKey& k : EmbeddingKeys(dialect)) j[k.key] = c.*(k.field);
  j["hidden_act"] = c.hidden_act;
  for (const DoubleKey& k : kDoubleKeys) j[k.key] = c.*(k.field);
  j[kPadKey.key] = c.pad_token_id;
  return ConfigJsonText(std::move(j), dtype);
}

Json SourceConfigJson(const BertConfig& c, const ConfigDialect& dialect) {
  Json j = Json::object();
  if (!c.source_json.empty()) {
    Json source = Json::parse(c.source_json, nullptr, /*allow_exceptions=*/false);
    if (source.is_object()) j = std::move(source);
  }
  j["architectures"] = {dialect.architecture};
  j["model_type"] = dialect.model_type;
  return j;
}

std::string ConfigJsonText(Json j, const std::string& dtype) {
  for (const char* key : {"dtype", "torch_dtype"}) {
    if (j.contains(key)) j[key] = dtype;
  }
  if (!j.contains("dtype") && !j.contains("torch_dtype")) j["torch_dtype"] = dtype;
  return JsonText(j);
}

std::string BertConfigToJson(const BertConfig& c, const std::string& dtype) {
  return EncoderConfigToJson(c, dtype, kBertDialect);
}

std::vector<std::pair<std::string, std::vector<int64_t>>> BertParameterShapes(const BertConfig& c,
                                                                              bool with_pooler) {
  const int64_t h = c.hidden_size, in = c.intermediate_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out = {
      {"embeddings.word_embeddings.weight", {c.vocab_size, h}},
      {"embeddings.position_embeddings.weight", {c.max_position_embeddings, h}},
      {"embeddings.LayerNorm.weight", {h}},
      {"embeddings.LayerNorm.bias", {h}},
  };
  if (c.type_vocab_size > 0) {
    out.insert(out.begin() + 2,
               {"embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}});
  }
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string l = absl::StrCat("encoder.layer.", i, ".");
    for (const char* qkv : {"query", "key", "value"}) {
      out.push_back({absl::StrCat(l, "attention.self.", qkv, ".weight"), {h, h}});
      out.push_back({absl::StrCat(l, "attention.self.", qkv, ".bias"), {h}});
    }
    out.push_back({l + "attention.output.dense.weight", {h, h}});
    out.push_back({l + "attention.output.dense.bias", {h}});
    out.push_back({l + "attention.output.LayerNorm.weight", {h}});
    out.push_back({l + "attention.output.LayerNorm.bias", {h}});
    out.push_back({l + "intermediate.dense.weight", {in, h}});
    out.push_back({l + "intermediate.dense.bias", {in}});
    out.push_back({l + "output.dense.weight", {h, in}});
    out.push_back({l + "output.dense.bias", {h}});
    out.push_back({l + "output.LayerNorm.weight", {h}});
    out.push_back({l + "output.LayerNorm.bias", {h}});
  }
  if (c.relative_attention_num_buckets > 0) {
    out.push_back({"encoder.relative_attention_bias.weight",
                   {c.relative_attention_num_buckets, c.num_attention_heads}});
  }
  if (with_pooler) {
    out.push_back({"pooler.dense.weight", {h, h}});
    out.push_back({"pooler.dense.bias", {h}});
  }
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
