#include "trainer/checkpoint.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/safetensors.h"

namespace tunefleet {
namespace trainer {
namespace {

using Json = nlohmann::json;

constexpr char kConfig[] = "config.json";
constexpr char kWeights[] = "model.safetensors";
constexpr char kIndex[] = "model.safetensors.index.json";
constexpr const char* kTokenizerFiles[] = {"vocab.txt", "tokenizer.json", "tokenizer_config.json",
                                           "special_tokens_map.json", "added_tokens.json"};
constexpr const char* kSentenceTransformersFiles[] = {
    "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"};

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const std::string message = absl::StrCat(path, ": cannot open: ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return absl::InternalError(absl::StrCat(path, ": read failed"));
  return s.str();
}

absl::StatusOr<Json> ParseJsonFile(const std::string& path, const std::string& text) {
  try {
    Json j = Json::parse(text);
    if (!j.is_object() && !j.is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON object"));
    }
    return j;
  } catch (const Json::exception& e) {
    std::string what = e.what();
    if (size_t close = what.find("] "); close != std::string::npos) what = what.substr(close + 2);
    std::replace(what.begin(), what.end(), '\n', ' ');
    return absl::InvalidArgumentError(absl::StrCat(path, ": invalid JSON: ", what));
  }
}

std::string Brief(const Json& j) {
  std::string s = j.dump();
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

absl::Status KeyError(absl::string_view path, const char* key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": key \"", key, "\" ", what));
}

absl::Status GetInt(const Json& j, absl::string_view path, const char* key, int64_t min,
                    int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return KeyError(path, key, "is missing");
  if (!it->is_number_integer()) {
    return KeyError(path, key, absl::StrCat("must be an integer, got ", Brief(*it)));
  }
  if (it->is_number_unsigned() ? it->get<uint64_t>() > INT64_MAX : it->get<int64_t>() < min) {
    return KeyError(path, key, absl::StrCat("must be >= ", min, ", got ", Brief(*it)));
  }
  *out = it->get<int64_t>();
  return absl::OkStatus();
}

absl::Status GetDouble(const Json& j, absl::string_view path, const char* key, double min,
                       double max, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return KeyError(path, key, "is missing");
  if (!it->is_number()) return KeyError(path, key, absl::StrCat("must be a number, got ", Brief(*it)));
  *out = it->get<double>();
  if (!(*out >= min && *out <= max)) {
    return KeyError(path, key, absl::StrCat("must be in [", min, ", ", max, "], got ", Brief(*it)));
  }
  return absl::OkStatus();
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// Tensors of a model folder by the names in the file, each with the file it came from.
struct RawWeights {
  std::map<std::string, torch::Tensor> tensors;
  std::map<std::string, std::string> file_of;
  std::vector<std::string> files;
};

absl::Status AddShard(const std::string& path, RawWeights& raw) {
  SafetensorsReadOptions options;
  options.to_float32 = true;
  ASSIGN_OR_RETURN(SafetensorsContents contents, ReadSafetensors(path, options));
  raw.files.push_back(path);
  for (auto& [name, tensor] : contents.tensors) {
    raw.file_of[name] = path;
    raw.tensors[name] = std::move(tensor);
  }
  return absl::OkStatus();
}

absl::StatusOr<RawWeights> ReadWeights(const std::string& dir) {
  RawWeights raw;
  const std::string single = JoinPath(dir, kWeights);
  if (IsFile(single)) {
    RETURN_IF_ERROR(AddShard(single, raw));
    return raw;
  }
  const std::string index_path = JoinPath(dir, kIndex);
  if (!IsFile(index_path)) {
    std::string hint;
    if (IsFile(JoinPath(dir, "pytorch_model.bin"))) {
      hint = " (pytorch_model.bin is not read: convert it to safetensors)";
    }
    return absl::NotFoundError(
        absl::StrCat(dir, ": no ", kWeights, " or ", kIndex, " in the model folder", hint));
  }
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(index_path));
  ASSIGN_OR_RETURN(Json index, ParseJsonFile(index_path, text));
  auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object() || map->empty()) {
    return KeyError(index_path, "weight_map", "must be a non-empty object of tensor -> file");
  }
  std::map<std::string, std::set<std::string>> shards;  // file -> tensors the index maps to it
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string() || file.get<std::string>().empty() ||
        file.get<std::string>().find('/') != std::string::npos ||
        file.get<std::string>() == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          index_path, ": weight_map: \"", tensor, "\" must map to a file name in the folder, got ",
          Brief(file)));
    }
    shards[file.get<std::string>()].insert(tensor);
  }
  for (const auto& [file, listed] : shards) {
    const std::string path = JoinPath(dir, file);
    RawWeights shard;
    RETURN_IF_ERROR(AddShard(path, shard));
    for (auto& [name, tensor] : shard.tensors) {
      if (listed.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": tensor \"", name, "\" is not mapped to this file by ", kIndex));
      }
      raw.file_of[name] = path;
      raw.tensors[name] = std::move(tensor);
    }
    for (const std::string& name : listed) {
      if (shard.tensors.count(name) == 0) {
        return absl::InvalidArgumentError(absl::StrCat(index_path, ": maps \"", name, "\" to ",
                                                       file, ", which does not hold it"));
      }
    }
    raw.files.push_back(path);
  }
  return raw;
}

// The BertModel name for a name in a checkpoint file ("" for names transformers ignores).
std::string CanonicalName(const std::string& name) {
  std::string n = absl::StartsWith(name, "bert.") ? name.substr(5) : name;
  if (n == "embeddings.position_ids") return "";  // a buffer older checkpoints saved
  for (const auto& [legacy, now] : {std::pair<const char*, const char*>{"LayerNorm.gamma",
                                                                         "LayerNorm.weight"},
                                    {"LayerNorm.beta", "LayerNorm.bias"}}) {
    if (absl::EndsWith(n, legacy)) n = n.substr(0, n.size() - strlen(legacy)) + now;
  }
  return n;
}

// Reads the sentence-transformers modules, when the folder has them.
absl::Status ReadSentenceTransformers(const std::string& dir, BertCheckpoint& out) {
  const std::string modules_path = JoinPath(dir, "modules.json");
  if (!IsFile(modules_path)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(modules_path));
  ASSIGN_OR_RETURN(Json modules, ParseJsonFile(modules_path, text));
  if (!modules.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(modules_path, ": expected a JSON array"));
  }
  const std::string st_config_path = JoinPath(dir, "sentence_bert_config.json");
  if (IsFile(st_config_path)) {
    ASSIGN_OR_RETURN(std::string st_text, ReadTextFile(st_config_path));
    ASSIGN_OR_RETURN(Json st_config, ParseJsonFile(st_config_path, st_text));
    if (st_config.is_object() && st_config.contains("max_seq_length")) {
      RETURN_IF_ERROR(GetInt(st_config, st_config_path, "max_seq_length", 1, &out.max_seq_length));
    }
  }
  for (const Json& m : modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    if (absl::EndsWith(type, "models.Normalize")) out.normalize = true;
    if (!absl::EndsWith(type, "models.Pooling")) continue;
    const std::string config_path = JoinPath(JoinPath(dir, m.value("path", "")), kConfig);
    ASSIGN_OR_RETURN(std::string pooling_text, ReadTextFile(config_path));
    ASSIGN_OR_RETURN(Json pooling, ParseJsonFile(config_path, pooling_text));
    for (const auto& [key, mode] : {std::pair<const char*, const char*>{"pooling_mode_cls_token", "cls"},
                                    {"pooling_mode_max_tokens", "max"},
                                    {"pooling_mode_mean_tokens", "mean"},
                                    {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"},
                                    {"pooling_mode_weightedmean_tokens", "weightedmean_tokens"},
                                    {"pooling_mode_lasttoken", "lasttoken"}}) {
      if (pooling.is_object() && pooling.value(key, false) == true) {
        if (!out.pooling.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              config_path, ": several pooling modes are on (", out.pooling, " and ", mode, ")"));
        }
        out.pooling = mode;
      }
    }
    if (out.pooling.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(config_path, ": no pooling mode is on"));
    }
  }
  return absl::OkStatus();
}

absl::Status CopyFile(const std::string& from, const std::string& to) {
  ASSIGN_OR_RETURN(std::string bytes, ReadTextFile(from));
  return WriteFileAtomically(to, bytes);
}

std::string JsonText(const Json& j) { return j.dump(2) + "\n"; }

}  // namespace

absl::StatusOr<BertConfig> ParseBertConfig(absl::string_view json, absl::string_view path) {
  const std::string p(path);
  ASSIGN_OR_RETURN(Json j, ParseJsonFile(p, std::string(json)));
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(p, ": expected a JSON object"));
  BertConfig c;
  c.source_json = std::string(json);
  if (auto it = j.find("model_type"); it != j.end() && *it != "bert") {
    return KeyError(p, "model_type", absl::StrCat("must be \"bert\", got ", Brief(*it)));
  }
  if (auto it = j.find("position_embedding_type"); it != j.end() && *it != "absolute") {
    return KeyError(p, "position_embedding_type",
                    absl::StrCat("must be \"absolute\", got ", Brief(*it)));
  }
  RETURN_IF_ERROR(GetInt(j, p, "vocab_size", 1, &c.vocab_size));
  RETURN_IF_ERROR(GetInt(j, p, "hidden_size", 1, &c.hidden_size));
  RETURN_IF_ERROR(GetInt(j, p, "num_hidden_layers", 1, &c.num_hidden_layers));
  RETURN_IF_ERROR(GetInt(j, p, "num_attention_heads", 1, &c.num_attention_heads));
  RETURN_IF_ERROR(GetInt(j, p, "intermediate_size", 1, &c.intermediate_size));
  auto act = j.find("hidden_act");
  if (act == j.end()) return KeyError(p, "hidden_act", "is missing");
  static const std::set<std::string> kActs = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu",
                                              "silu", "swish"};
  if (!act->is_string() || kActs.count(act->get<std::string>()) == 0) {
    return KeyError(p, "hidden_act",
                    absl::StrCat("must be one of ", absl::StrJoin(kActs, ", "), ", got ", Brief(*act)));
  }
  c.hidden_act = act->get<std::string>();
  RETURN_IF_ERROR(GetInt(j, p, "max_position_embeddings", 1, &c.max_position_embeddings));
  RETURN_IF_ERROR(GetInt(j, p, "type_vocab_size", 1, &c.type_vocab_size));
  RETURN_IF_ERROR(GetDouble(j, p, "layer_norm_eps", 0.0, 1.0, &c.layer_norm_eps));
  RETURN_IF_ERROR(GetDouble(j, p, "hidden_dropout_prob", 0.0, 1.0, &c.hidden_dropout_prob));
  RETURN_IF_ERROR(GetDouble(j, p, "attention_probs_dropout_prob", 0.0, 1.0,
                            &c.attention_probs_dropout_prob));
  RETURN_IF_ERROR(GetInt(j, p, "pad_token_id", 0, &c.pad_token_id));
  if (c.layer_norm_eps <= 0) return KeyError(p, "layer_norm_eps", "must be > 0");
  if (c.hidden_size % c.num_attention_heads != 0) {
    return KeyError(p, "num_attention_heads",
                    absl::StrCat("(", c.num_attention_heads, ") must divide hidden_size (",
                                 c.hidden_size, ")"));
  }
  if (c.pad_token_id >= c.vocab_size) {
    return KeyError(p, "pad_token_id", absl::StrCat("(", c.pad_token_id,
                                                    ") must be < vocab_size (", c.vocab_size, ")"));
  }
  return c;
}

absl::StatusOr<BertConfig> ReadBertConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseBertConfig(text, path);
}

std::string BertConfigToJson(const BertConfig& c, const std::string& dtype) {
  Json j = Json::object();
  if (!c.source_json.empty()) {
    Json source = Json::parse(c.source_json, nullptr, /*allow_exceptions=*/false);
    if (source.is_object()) j = std::move(source);
  }
  j["architectures"] = {"BertModel"};
  j["model_type"] = "bert";
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["num_hidden_layers"] = c.num_hidden_layers;
  j["num_attention_heads"] = c.num_attention_heads;
  j["intermediate_size"] = c.intermediate_size;
  j["hidden_act"] = c.hidden_act;
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["type_vocab_size"] = c.type_vocab_size;
  j["layer_norm_eps"] = c.layer_norm_eps;
  j["hidden_dropout_prob"] = c.hidden_dropout_prob;
  j["attention_probs_dropout_prob"] = c.attention_probs_dropout_prob;
  j["pad_token_id"] = c.pad_token_id;
  for (const char* key : {"dtype", "torch_dtype"}) {
    if (j.contains(key)) j[key] = dtype;
  }
  if (!j.contains("dtype") && !j.contains("torch_dtype")) j["torch_dtype"] = dtype;
  return JsonText(j);
}

std::vector<std::pair<std::string, std::vector<int64_t>>> BertParameterShapes(
    const BertConfig& c, bool with_pooler) {
  const int64_t h = c.hidden_size, in = c.intermediate_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> out = {
      {"embeddings.word_embeddings.weight", {c.vocab_size, h}},
      {"embeddings.position_embeddings.weight", {c.max_position_embeddings, h}},
      {"embeddings.token_type_embeddings.weight", {c.type_vocab_size, h}},
      {"embeddings.LayerNorm.weight", {h}},
      {"embeddings.LayerNorm.bias", {h}},
  };
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
  if (with_pooler) {
    out.push_back({"pooler.dense.weight", {h, h}});
    out.push_back({"pooler.dense.bias", {h}});
  }
  return out;
}

absl::StatusOr<BertCheckpoint> LoadBertCheckpoint(const std::string& dir) {
  if (!IsDir(dir)) return absl::NotFoundError(absl::StrCat(dir, ": no such model folder"));
  BertCheckpoint out;
  ASSIGN_OR_RETURN(out.config, ReadBertConfig(JoinPath(dir, kConfig)));
  ASSIGN_OR_RETURN(RawWeights raw, ReadWeights(dir));
  out.weight_files = raw.files;
  std::map<std::string, std::vector<int64_t>> expected;
  for (auto& [name, shape] : BertParameterShapes(out.config)) expected[name] = shape;
  std::map<std::string, std::string> source_name;  // BertModel name -> name in the file
  for (auto& [name, tensor] : raw.tensors) {
    const std::string canonical = CanonicalName(name);
    if (canonical.empty()) continue;
    auto want = expected.find(canonical);
    if (want == expected.end()) {
      out.unexpected_keys.push_back(name);
      continue;
    }
    if (auto [it, fresh] = source_name.emplace(canonical, name); !fresh) {
      return absl::InvalidArgumentError(absl::StrCat(raw.file_of[name], ": tensors \"", it->second,
                                                     "\" and \"", name, "\" are both ", canonical));
    }
    if (tensor.sizes().vec() != want->second) {
      return absl::InvalidArgumentError(absl::StrCat(
          raw.file_of[name], ": size mismatch for ", name, ": the checkpoint has shape ",
          ShapeString(tensor.sizes().vec()), ", the model (config.json) needs ",
          ShapeString(want->second)));
    }
    if (!tensor.is_floating_point()) {
      return absl::InvalidArgumentError(absl::StrCat(raw.file_of[name], ": tensor \"", name,
                                                     "\" is not floating point"));
    }
    out.tensors[canonical] = std::move(tensor);
  }
  for (const auto& [name, shape] : expected) {
    if (out.tensors.count(name) == 0) out.missing_keys.push_back(name);
  }
  std::vector<std::string> fatal;
  for (const std::string& name : out.missing_keys) {
    if (!absl::StartsWith(name, "pooler.")) fatal.push_back(name);
  }
  if (!fatal.empty()) {
    const size_t shown = std::min<size_t>(fatal.size(), 4);
    return absl::InvalidArgumentError(absl::StrCat(
        dir, ": the weights lack ", fatal.size(), " BertModel tensor(s): ",
        absl::StrJoin(fatal.begin(), fatal.begin() + shown, ", "),
        fatal.size() > shown ? ", ..." : ""));
  }
  out.has_pooler = out.missing_keys.empty();
  if (!out.unexpected_keys.empty()) {
    TF_LOG(WARNING) << "Some weights of the model checkpoint at " << dir
                    << " were not used when initializing BertModel: ['"
                    << absl::StrJoin(out.unexpected_keys, "', '") << "']";
  }
  if (!out.missing_keys.empty()) {
    TF_LOG(WARNING) << "Some weights of BertModel were not initialized from the model checkpoint at "
                    << dir << " and are newly initialized: ['"
                    << absl::StrJoin(out.missing_keys, "', '") << "']";
  }
  RETURN_IF_ERROR(ReadSentenceTransformers(dir, out));
  return out;
}

absl::Status SaveBertCheckpoint(const std::string& dir, const BertConfig& config,
                                const std::map<std::string, torch::Tensor>& tensors,
                                const CheckpointSaveOptions& options) {
  RETURN_IF_ERROR(MakeDirs(dir));
  std::string dtype = "float32";
  for (const auto& [name, t] : tensors) {
    if (t.defined() && t.scalar_type() == torch::kBFloat16) dtype = "bfloat16";
    if (t.defined() && t.scalar_type() == torch::kFloat16) dtype = "float16";
  }
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(dir, kWeights), tensors));
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, kConfig), BertConfigToJson(config, dtype)));
  const std::string& src = options.source_dir;
  const bool same_folder = !src.empty() && IsDir(src) && [&] {
    struct stat a, b;
    return ::stat(src.c_str(), &a) == 0 && ::stat(dir.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
  }();
  if (!src.empty() && !same_folder) {
    for (const char* name : kTokenizerFiles) {
      if (IsFile(JoinPath(src, name))) RETURN_IF_ERROR(CopyFile(JoinPath(src, name), JoinPath(dir, name)));
    }
  }
  if (!options.pooling.empty()) {
    static const std::set<std::string> kModes = {"mean", "cls", "max"};
    if (kModes.count(options.pooling) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("pooling \"", options.pooling, "\" is not one of cls, max, mean"));
    }
    Json modules = Json::array();
    for (const auto& [idx, path, type] :
         {std::tuple<int, const char*, const char*>{0, "", "Transformer"}, {1, "1_Pooling", "Pooling"}}) {
      Json m = Json::object();
      m["idx"] = idx;
      m["name"] = std::to_string(idx);
      m["path"] = path;
      m["type"] = std::string("sentence_transformers.models.") + type;
      modules.push_back(std::move(m));
    }
    const Json pooling = {{"word_embedding_dimension", config.hidden_size},
                          {"pooling_mode_cls_token", options.pooling == "cls"},
                          {"pooling_mode_mean_tokens", options.pooling == "mean"},
                          {"pooling_mode_max_tokens", options.pooling == "max"},
                          {"pooling_mode_mean_sqrt_len_tokens", false},
                          {"pooling_mode_weightedmean_tokens", false},
                          {"pooling_mode_lasttoken", false},
                          {"include_prompt", true}};
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "modules.json"), JsonText(modules)));
    Json st_config = Json::object();
    st_config["max_seq_length"] = options.max_seq_length;
    st_config["do_lower_case"] = false;
    RETURN_IF_ERROR(
        WriteFileAtomically(JoinPath(dir, "sentence_bert_config.json"), JsonText(st_config)));
    RETURN_IF_ERROR(MakeDirs(JoinPath(dir, "1_Pooling")));
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "1_Pooling/config.json"), JsonText(pooling)));
  } else if (!src.empty() && !same_folder && IsFile(JoinPath(src, "modules.json"))) {
    for (const char* name : kSentenceTransformersFiles) {
      if (IsFile(JoinPath(src, name))) RETURN_IF_ERROR(CopyFile(JoinPath(src, name), JoinPath(dir, name)));
    }
    ASSIGN_OR_RETURN(std::string text, ReadTextFile(JoinPath(src, "modules.json")));
    ASSIGN_OR_RETURN(Json modules, ParseJsonFile(JoinPath(src, "modules.json"), text));
    for (const Json& m : modules.is_array() ? modules : Json::array()) {
      const std::string path = m.is_object() ? m.value("path", "") : "";
      if (path.empty() || path.find("..") != std::string::npos || path[0] == '/') continue;
      RETURN_IF_ERROR(MakeDirs(JoinPath(dir, path)));
      const std::string module_config = JoinPath(JoinPath(src, path), kConfig);
      if (IsFile(module_config)) RETURN_IF_ERROR(CopyFile(module_config, JoinPath(JoinPath(dir, path), kConfig)));
    }
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
