#include "common/arg_template.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

// Walks `text`: literal runs go to `out` (when given), each {NAME} to `name` (which may fill
// `out` itself). Stops at the first error.
template <typename OnName>
absl::Status Walk(const std::string& text, std::string* out, OnName on_name) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        if (out != nullptr) out->push_back('}');
        ++i;
        continue;
      }
      return absl::InvalidArgumentError(
          absl::StrCat("a lone '}' at character ", i + 1, " (a literal brace is '}}')"));
    }
    if (c != '{') {
      if (out != nullptr) out->push_back(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      if (out != nullptr) out->push_back('{');
      ++i;
      continue;
    }
    const size_t close = text.find_first_of("{}", i + 1);
    if (close == std::string::npos || text[close] != '}') {
      return absl::InvalidArgumentError(
          absl::StrCat("an unclosed '{' at character ", i + 1, " (a literal brace is '{{')"));
    }
    if (close == i + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("'{}' at character ", i + 1, " names nothing"));
    }
    if (absl::Status s = on_name(text.substr(i + 1, close - i - 1)); !s.ok()) return s;
    i = close;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> TemplateNames(const std::string& text) {
  std::vector<std::string> names;
  absl::Status s = Walk(text, nullptr, [&names](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return names;
}

absl::StatusOr<std::string> RenderTemplate(const std::string& text,
                                           const std::map<std::string, std::string>& values) {
  std::string out;
  absl::Status s = Walk(text, &out, [&](const std::string& name) {
    auto it = values.find(name);
    if (it == values.end()) return absl::NotFoundError(absl::StrCat("{", name, "} names no value"));
    out += it->second;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace tunefleet
