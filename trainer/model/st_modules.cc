#include "trainer/model/st_modules.h"

#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "trainer/io/hf_folder_util.h"

namespace tunefleet {
namespace trainer {
namespace {

// Adds the pooling mode that `config_path`'s Pooling config turns on to `out` (the mode found so
// far, or ""): a second mode is an error.
absl::Status AddPoolingMode(const std::string& config_path, std::string& out) {
  ASSIGN_OR_RETURN(Json pooling, ReadJsonFile(config_path));
  for (const auto& [key, mode] :
       {std::pair<const char*, const char*>{"pooling_mode_cls_token", "cls"},
        {"pooling_mode_max_tokens", "max"},
        {"pooling_mode_mean_tokens", "mean"},
        {"pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"},
        {"pooling_mode_weightedmean_tokens", "weightedmean_tokens"},
        {"pooling_mode_lasttoken", "lasttoken"}}) {
    if (pooling.is_object() && pooling.value(key, false) == true) {
      if (!out.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(config_path, ": several pooling modes are on (", out, " and ", mode, ")"));
      }
      out = mode;
    }
  }
  return absl::OkStatus();
}

// The Pooling config's include_prompt (true when absent).
absl::Status ReadIncludePrompt(const std::string& config_path, bool* out) {
  ASSIGN_OR_RETURN(Json pooling, ReadJsonFile(config_path));
  if (!pooling.is_object() || !pooling.contains("include_prompt")) return absl::OkStatus();
  if (!pooling["include_prompt"].is_boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat(config_path, ": include_prompt: expected true or false"));
  }
  *out = pooling["include_prompt"].get<bool>();
  return absl::OkStatus();
}

// config_sentence_transformers.json as SentenceTransformer.save writes it, less the versions.
std::string StConfigJson(const StPrompts& p) {
  Json config = Json::object();
  config["model_type"] = "SentenceTransformer";
  config["prompts"] = p.prompts;
  config["default_prompt_name"] =
      p.default_prompt_name.empty() ? Json(nullptr) : Json(p.default_prompt_name);
  config["similarity_fn_name"] = nullptr;
  return JsonText(config);
}

constexpr char kModules[] = "modules.json";
constexpr char kStConfig[] = "sentence_bert_config.json";
constexpr char kModuleConfig[] = "config.json";

}  // namespace

absl::StatusOr<StModules> ReadStModules(const std::string& dir) {
  StModules out;
  const std::string modules_path = JoinPath(dir, kModules);
  if (!IsFile(modules_path)) return out;
  ASSIGN_OR_RETURN(Json modules, ReadJsonFile(modules_path));
  if (!modules.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(modules_path, ": expected a JSON array"));
  }
  const std::string st_config_path = JoinPath(dir, kStConfig);
  if (IsFile(st_config_path)) {
    ASSIGN_OR_RETURN(Json st_config, ReadJsonFile(st_config_path));
    if (st_config.is_object() && st_config.contains("max_seq_length")) {
      RETURN_IF_ERROR(
          GetJsonInt(st_config, st_config_path, "max_seq_length", 1, &out.max_seq_length));
    }
  }
  for (const Json& m : modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    if (absl::EndsWith(type, "models.Normalize")) out.normalize = true;
    if (!absl::EndsWith(type, "models.Pooling")) continue;
    const std::string config_path = JoinPath(JoinPath(dir, m.value("path", "")), kModuleConfig);
    RETURN_IF_ERROR(AddPoolingMode(config_path, out.pooling));
    if (out.pooling.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(config_path, ": no pooling mode is on"));
    }
    RETURN_IF_ERROR(ReadIncludePrompt(config_path, &out.include_prompt));
  }
  return out;
}

absl::Status WriteStModules(const std::string& dir, const std::string& pooling, int64_t hidden_size,
                            int64_t max_seq_length, const StPrompts& prompts) {
  static const std::set<std::string> kModes = {"mean", "cls", "max"};
  if (kModes.count(pooling) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pooling \"", pooling, "\" is not one of cls, max, mean"));
  }
  Json modules = Json::array();
  for (const auto& [idx, path, type] :
       {std::tuple<int, const char*, const char*>{0, "", "Transformer"},
        {1, "1_Pooling", "Pooling"}}) {
    Json m = Json::object();
    m["idx"] = idx;
    m["name"] = std::to_string(idx);
    m["path"] = path;
    m["type"] = std::string("sentence_transformers.models.") + type;
    modules.push_back(std::move(m));
  }
  const Json pooling_config = {{"word_embedding_dimension", hidden_size},
                               {"pooling_mode_cls_token", pooling == "cls"},
                               {"pooling_mode_mean_tokens", pooling == "mean"},
                               {"pooling_mode_max_tokens", pooling == "max"},
                               {"pooling_mode_mean_sqrt_len_tokens", false},
                               {"pooling_mode_weightedmean_tokens", false},
                               {"pooling_mode_lasttoken", false},
                               {"include_prompt", prompts.include_prompt}};
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, kModules), JsonText(modules)));
  Json st_config = Json::object();
  st_config["max_seq_length"] = max_seq_length;
  st_config["do_lower_case"] = false;
  RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, kStConfig), JsonText(st_config)));
  if (!prompts.prompts.empty()) {
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, "config_sentence_transformers.json"),
                                        StConfigJson(prompts)));
  }
  RETURN_IF_ERROR(MakeDirs(JoinPath(dir, "1_Pooling")));
  return WriteFileAtomically(JoinPath(dir, "1_Pooling/config.json"), JsonText(pooling_config));
}

absl::Status CopyStModules(const std::string& src, const std::string& dir) {
  if (!IsFile(JoinPath(src, kModules))) return absl::OkStatus();
  RETURN_IF_ERROR(
      CopyFilesFrom(src, dir, {kModules, kStConfig, "config_sentence_transformers.json"}));
  ASSIGN_OR_RETURN(Json modules, ReadJsonFile(JoinPath(src, kModules)));
  for (const Json& m : modules.is_array() ? modules : Json::array()) {
    const std::string path = m.is_object() ? m.value("path", "") : "";
    if (path.empty() || path.find("..") != std::string::npos || path[0] == '/') continue;
    RETURN_IF_ERROR(MakeDirs(JoinPath(dir, path)));
    RETURN_IF_ERROR(CopyFilesFrom(JoinPath(src, path), JoinPath(dir, path), {kModuleConfig}));
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
