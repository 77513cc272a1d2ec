#include "hpo/config/config_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/name_chars.h"
#include "common/status_macros.h"
#include "common/trial_env.h"

namespace tunefleet {
namespace hpo {

absl::Status AtLeast(const ConfigMap& m, const std::string& key, int64_t value, int64_t low) {
  if (value < low) return m.Error(key, absl::StrCat("must be >= ", low, ", got ", value));
  return absl::OkStatus();
}

absl::Status GetTrialEnv(const ConfigMap& env, std::map<std::string, std::string>* out) {
  RETURN_IF_ERROR(env.AllowOnly(env.Keys()));  // duplicates
  for (const std::string& name : env.Keys()) {
    if (name.empty() || name.size() > 128 ||
        absl::ascii_isdigit(static_cast<unsigned char>(name[0])) || !AllAlnumOr(name, "_")) {
      return env.Error(name, "is not an environment variable name");
    }
    if (const std::string why = TrialEnvForbidden(name); !why.empty()) {
      return env.Error(name,
                       absl::StrCat(why, "; agents never pass it (docs/CONFIG.md: resources.env)"));
    }
    RETURN_IF_ERROR(env.Get(name, &(*out)[name]));
  }
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
