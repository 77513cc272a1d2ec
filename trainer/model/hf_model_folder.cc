#include "trainer/model/hf_model_folder.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "trainer/data/tokenizer_folder.h"
#include "trainer/io/hf_folder_util.h"
#include "trainer/io/safetensors.h"
#include "trainer/model/classifier_heads.h"
#include "trainer/model/model_family_registry.h"
#include "trainer/model/st_modules.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kConfig[] = "config.json";
constexpr char kWeights[] = "model.safetensors";
constexpr char kIndex[] = "model.safetensors.index.json";

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
  ASSIGN_OR_RETURN(Json index, ReadJsonFile(index_path));
  auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object() || map->empty()) {
    return JsonKeyError(index_path, "weight_map", "must be a non-empty object of tensor -> file");
  }
  std::map<std::string, std::set<std::string>> shards;  // file -> tensors the index maps to it
  for (const auto& [tensor, file] : map->items()) {
    if (!file.is_string() || file.get<std::string>().empty() ||
        file.get<std::string>().find('/') != std::string::npos || file.get<std::string>() == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(index_path, ": weight_map: \"", tensor,
                       "\" must map to a file name in the folder, got ", JsonBrief(file)));
    }
    shards[file.get<std::string>()].insert(tensor);
  }
  for (const auto& [file, listed] : shards) {
    const std::string path = JoinPath(dir, file);
    RawWeights shard;
    RETURN_IF_ERROR(AddShard(path, shard));
    for (auto& [name, tensor] : shard.tensors) {
      if (listed.count(name) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": tensor \"", name, "\" is not mapped to this file by ", kIndex));
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

// config.json of a cross-encoder: the encoder's `json` (as the family writes it) with
// `architecture`, `labels` labels as transformers names them by default, and the activation
// sentence-transformers' CrossEncoder applies (its default for that many labels).
std::string CrossEncoderConfigJson(const std::string& json, absl::string_view architecture,
                                   int64_t labels) {
  Json j = Json::parse(json);
  j["architectures"] = {std::string(architecture)};
  Json id2label = Json::object(), label2id = Json::object();
  for (int64_t i = 0; i < labels; ++i) {
    id2label[absl::StrCat(i)] = absl::StrCat("LABEL_", i);
    label2id[absl::StrCat("LABEL_", i)] = i;
  }
  j["id2label"] = id2label;
  j["label2id"] = label2id;
  j["sentence_transformers"] = {{"activation_fn", labels == 1
                                                      ? "torch.nn.modules.activation.Sigmoid"
                                                      : "torch.nn.modules.linear.Identity"}};
  return JsonText(j);
}

// Whether `a` and `b` name the same folder.
bool SameFolder(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

}  // namespace

absl::StatusOr<BertCheckpoint> LoadBertCheckpoint(const std::string& dir) {
  if (!IsDir(dir)) return absl::NotFoundError(absl::StrCat(dir, ": no such model folder"));
  BertCheckpoint out;
  ASSIGN_OR_RETURN(out.config, ReadModelConfig(JoinPath(dir, kConfig)));
  const ModelFamily& family = FamilyOf(out.config);
  ASSIGN_OR_RETURN(RawWeights raw, ReadWeights(dir));
  out.weight_files = raw.files;
  // A cross-encoder whose class has no pooler (RobertaForSequenceClassification) has none.
  const ClassifierHead head = family.classifier_head();
  bool with_pooler = true;
  for (const auto& [name, tensor] : raw.tensors) {
    if (IsClassifierHeadTensor(head, name)) with_pooler = ClassifierHeadUsesPooler(head);
  }
  std::map<std::string, std::vector<int64_t>> expected;
  for (auto& [name, shape] : family.ParameterShapes(out.config, with_pooler))
    expected[name] = shape;
  std::map<std::string, std::string> source_name;  // module name -> name in the file
  for (auto& [name, tensor] : raw.tensors) {
    if (IsClassifierHeadTensor(head, name)) {
      if (!tensor.is_floating_point()) {
        return absl::InvalidArgumentError(
            absl::StrCat(raw.file_of[name], ": tensor \"", name, "\" is not floating point"));
      }
      out.head[name] = std::move(tensor);
      continue;
    }
    const std::string canonical = family.ModuleName(name);
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
      return absl::InvalidArgumentError(
          absl::StrCat(raw.file_of[name], ": size mismatch for ", name,
                       ": the checkpoint has shape ", ShapeString(tensor.sizes().vec()),
                       ", the model (config.json) needs ", ShapeString(want->second)));
    }
    if (!tensor.is_floating_point()) {
      return absl::InvalidArgumentError(
          absl::StrCat(raw.file_of[name], ": tensor \"", name, "\" is not floating point"));
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
    return absl::InvalidArgumentError(
        absl::StrCat(dir, ": the weights lack ", fatal.size(), " ", family.architecture(),
                     " tensor(s): ", absl::StrJoin(fatal.begin(), fatal.begin() + shown, ", "),
                     fatal.size() > shown ? ", ..." : ""));
  }
  // A family without pooler (DistilBERT) lists no pooler.* parameter: its model has none.
  out.has_pooler = out.missing_keys.empty() && expected.count("pooler.dense.weight") > 0;
  LogCheckpointKeyWarnings(dir, out);
  ASSIGN_OR_RETURN(StModules modules, ReadStModules(dir));
  out.pooling = std::move(modules.pooling);
  out.normalize = modules.normalize;
  out.max_seq_length = modules.max_seq_length;
  out.include_prompt = modules.include_prompt;
  return out;
}

void LogCheckpointKeyWarnings(const std::string& dir, const BertCheckpoint& checkpoint) {
  const absl::string_view architecture = FamilyOf(checkpoint.config).architecture();
  if (!checkpoint.unexpected_keys.empty()) {
    TF_LOG(WARNING) << "Some weights of the model checkpoint at " << dir
                    << " were not used when initializing " << architecture << ": ['"
                    << absl::StrJoin(checkpoint.unexpected_keys, "', '") << "']";
  }
  if (!checkpoint.missing_keys.empty()) {
    TF_LOG(WARNING) << "Some weights of " << architecture << " were not initialized from the model "
                    << "checkpoint at " << dir << " and are newly initialized: ['"
                    << absl::StrJoin(checkpoint.missing_keys, "', '") << "']";
  }
}

absl::Status SaveBertCheckpoint(const std::string& dir, const BertConfig& config,
                                const std::map<std::string, torch::Tensor>& tensors,
                                const CheckpointSaveOptions& options) {
  const ModelFamily& family = FamilyOf(config);
  const bool cross_encoder = !options.head.empty();
  if (cross_encoder && family.classifier_head() == ClassifierHead::kNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model_type ", family.model_type(), " has no sequence classification head in tunefleet"));
  }
  RETURN_IF_ERROR(MakeDirs(dir));
  std::string dtype = "float32";
  std::map<std::string, torch::Tensor> named;  // by the names the family saves them under
  for (const auto& [name, t] : tensors) {
    // The class of a head without pooler (RobertaForSequenceClassification) has none.
    if (cross_encoder && !ClassifierHeadUsesPooler(family.classifier_head()) &&
        absl::StartsWith(name, "pooler.")) {
      continue;
    }
    if (t.defined() && t.scalar_type() == torch::kBFloat16) dtype = "bfloat16";
    if (t.defined() && t.scalar_type() == torch::kFloat16) dtype = "float16";
    const std::string file_name = family.FileName(name);
    named.emplace(cross_encoder
                      ? absl::StrCat(family.base_model_prefix(),
                                     absl::StripPrefix(file_name, family.base_model_prefix()))
                      : file_name,
                  t);
  }
  for (const auto& [name, t] : options.head) named.emplace(name, t);
  RETURN_IF_ERROR(WriteSafetensors(JoinPath(dir, kWeights), named));
  std::string config_json = family.ConfigToJson(config, dtype);
  if (cross_encoder) {
    const int64_t labels = std::max<int64_t>(ClassifierHeadLabels(options.head), 1);
    config_json = CrossEncoderConfigJson(config_json, family.classifier_architecture(), labels);
  }
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, kConfig), config_json));
  const std::string& src = options.source_dir;
  const bool copy = !src.empty() && !(IsDir(src) && SameFolder(src, dir));
  if (copy) RETURN_IF_ERROR(CopyFilesFrom(src, dir, TokenizerFileNames()));
  if (cross_encoder) return absl::OkStatus();
  if (!options.pooling.empty()) {
    return WriteStModules(dir, options.pooling, config.hidden_size, options.max_seq_length,
                          options.prompts);
  }
  return copy ? CopyStModules(src, dir) : absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
