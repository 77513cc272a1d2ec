#include "trainer/model/model_family_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "trainer/io/hf_folder_util.h"
#include "trainer/model/all_families.h"

namespace tunefleet {
namespace trainer {

const ModelFamily* FindModelFamily(absl::string_view model_type) {
  for (const ModelFamily* family : AllModelFamilies()) {
    if (family->model_type() == model_type) return family;
  }
  return nullptr;
}

std::vector<std::string> ModelTypes() {
  std::vector<std::string> types;
  for (const ModelFamily* family : AllModelFamilies()) types.emplace_back(family->model_type());
  return types;
}

const ModelFamily& FamilyOf(const BertConfig& config) {
  const ModelFamily* family = FindModelFamily(config.model_type);
  if (family == nullptr) {
    TF_LOG(FATAL) << "model_type \"" << config.model_type << "\" has no model family";
  }
  return *family;
}

absl::StatusOr<BertConfig> ParseModelConfig(absl::string_view json, absl::string_view path) {
  ASSIGN_OR_RETURN(Json j, ParseJsonFile(path, std::string(json)));
  if (!j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON object"));
  }
  const ModelFamily* family = AllModelFamilies().front();
  if (auto it = j.find("model_type"); it != j.end()) {
    family = it->is_string() ? FindModelFamily(it->get<std::string>()) : nullptr;
    if (family == nullptr) {
      return JsonKeyError(
          path, "model_type",
          absl::StrCat("is ", JsonBrief(*it), ", which no model family reads (known: ",
                       absl::StrJoin(ModelTypes(), ", "), ")"));
    }
  }
  return family->ParseConfig(json, path);
}

absl::StatusOr<BertConfig> ReadModelConfig(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseModelConfig(text, path);
}

}  // namespace trainer
}  // namespace tunefleet
