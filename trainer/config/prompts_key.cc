#include "trainer/config/prompts_key.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

absl::Status ReadPromptsKey(const ConfigMap& m, const std::string& key, std::string* all,
                            std::map<std::string, std::string>* by_column) {
  if (!m.IsMap(key)) return m.GetOptional(key, all);
  ASSIGN_OR_RETURN(ConfigMap prompts, m.GetMap(key));
  RETURN_IF_ERROR(prompts.AllowOnly(prompts.Keys()));  // a column named twice
  for (const std::string& column : prompts.Keys()) {
    std::string prompt;
    RETURN_IF_ERROR(prompts.Get(column, &prompt));
    if (!prompt.empty()) (*by_column)[column] = prompt;
  }
  return absl::OkStatus();
}

absl::Status CheckPromptsKey(const ConfigMap& m, const std::string& key,
                             const std::string& model_kind, const std::string& format,
                             const std::vector<std::string>& columns, const std::string& all,
                             const std::map<std::string, std::string>& by_column) {
  if (all.empty() && by_column.empty()) return absl::OkStatus();
  if (model_kind != "bi_encoder") {
    return m.Error(key,
                   absl::StrCat("only applies to model.kind bi_encoder (not ", model_kind, ")"));
  }
  const bool named = format == "jsonl" || format == "csv" || format == "tsv";
  const std::vector<std::string> text =
      named ? columns : std::vector<std::string>{"sentence1", "sentence2"};
  if (text.empty()) return absl::OkStatus();
  for (const auto& [column, prompt] : by_column) {
    if (std::find(text.begin(), text.end(), column) != text.end()) continue;
    return m.Error(key, absl::StrCat("column \"", column, "\" is not a text column (",
                                     absl::StrJoin(text, ", "), ")"));
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
