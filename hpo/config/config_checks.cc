#include "hpo/config/config_checks.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace hpo {

absl::Status AtLeast(const ConfigMap& m, const std::string& key, int64_t value, int64_t low) {
  if (value < low) return m.Error(key, absl::StrCat("must be >= ", low, ", got ", value));
  return absl::OkStatus();
}

absl::Status GetAtLeast(const ConfigMap& m, const std::string& key, int64_t* value, int64_t low) {
  RETURN_IF_ERROR(m.GetOptional(key, value));
  return AtLeast(m, key, *value, low);
}

absl::Status GetResourceOrAuto(const ConfigMap& m, const std::string& key, int64_t* value) {
  if (!m.Has(key)) return absl::OkStatus();
  std::string text;
  RETURN_IF_ERROR(m.GetYamlText(key, &text));
  if (text == "auto") return absl::OkStatus();
  RETURN_IF_ERROR(m.Get(key, value));
  return AtLeast(m, key, *value, 1);
}

}  // namespace hpo
}  // namespace tunefleet
