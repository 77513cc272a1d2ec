#include "hpo/pruners/pruner_kind.h"

#include "absl/strings/str_cat.h"
#include "common/py_json.h"

namespace tunefleet {
namespace hpo {

absl::StatusOr<PrunerSettingsPtr> PrunerSettings::Resolve(const ResourceAxis&,
                                                          const std::string&) const {
  return shared_from_this();
}

std::string PrunerJson(const std::string& type,
                       const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out = absl::StrCat("{\"type\": ", JsonString(type));
  for (const auto& [key, value] : fields) absl::StrAppend(&out, ", ", JsonString(key), ": ", value);
  return out + "}";
}

}  // namespace hpo
}  // namespace tunefleet
