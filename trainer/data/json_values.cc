#include "trainer/data/json_values.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {

std::string Shown(absl::string_view text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return std::string(text);
  size_t end = kMax;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return absl::StrCat(text.substr(0, end), "...");
}

bool IsNumberList(const nlohmann::ordered_json& v) {
  if (!v.is_array() || v.empty()) return false;
  for (const auto& x : v) {
    if (!x.is_number()) return false;
  }
  return true;
}

absl::StatusOr<std::vector<std::string>> TextList(const nlohmann::ordered_json& v) {
  if (!v.is_array() || v.empty()) {
    return absl::InvalidArgumentError(
        v.is_array() ? "is an empty list" : absl::StrCat("is not a list (", Shown(v.dump()), ")"));
  }
  std::vector<std::string> out;
  for (const auto& x : v) {
    if (!x.is_string() || x.get<std::string>().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("holds ", Shown(x.dump()), ", not a non-empty string"));
    }
    out.push_back(x.get<std::string>());
  }
  return out;
}

absl::StatusOr<std::vector<double>> NumberList(const nlohmann::ordered_json& v) {
  if (!v.is_array() || v.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("is not a list of numbers (", Shown(v.dump()), ")"));
  }
  std::vector<double> out;
  for (const auto& x : v) {
    if (!x.is_number() || !std::isfinite(x.get<double>())) {
      return absl::InvalidArgumentError(absl::StrCat("holds ", Shown(x.dump()), ", not a number"));
    }
    out.push_back(x.get<double>());
  }
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
