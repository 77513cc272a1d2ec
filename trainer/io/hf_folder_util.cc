#include "trainer/io/hf_folder_util.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<Json> ParseJsonFile(absl::string_view path, const std::string& text) {
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

absl::StatusOr<Json> ReadJsonFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJsonFile(path, text);
}

std::string JsonBrief(const Json& j) {
  std::string s = j.dump();
  return s.size() > 40 ? s.substr(0, 40) + "..." : s;
}

absl::Status JsonKeyError(absl::string_view path, const char* key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": key \"", key, "\" ", what));
}

absl::Status GetJsonInt(const Json& j, absl::string_view path, const char* key, int64_t min,
                        int64_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return JsonKeyError(path, key, "is missing");
  if (!it->is_number_integer()) {
    return JsonKeyError(path, key, absl::StrCat("must be an integer, got ", JsonBrief(*it)));
  }
  // (A parsed non-negative number is unsigned: the bound applies to it too.)
  if ((it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX) || it->get<int64_t>() < min) {
    return JsonKeyError(path, key, absl::StrCat("must be >= ", min, ", got ", JsonBrief(*it)));
  }
  *out = it->get<int64_t>();
  return absl::OkStatus();
}

absl::Status GetJsonDouble(const Json& j, absl::string_view path, const char* key, double min,
                           double max, double* out) {
  auto it = j.find(key);
  if (it == j.end()) return JsonKeyError(path, key, "is missing");
  if (!it->is_number()) {
    return JsonKeyError(path, key, absl::StrCat("must be a number, got ", JsonBrief(*it)));
  }
  *out = it->get<double>();
  if (!(*out >= min && *out <= max)) {
    return JsonKeyError(path, key,
                        absl::StrCat("must be in [", min, ", ", max, "], got ", JsonBrief(*it)));
  }
  return absl::OkStatus();
}

std::string JsonText(const Json& j) { return j.dump(2) + "\n"; }

absl::Status CopyFilesFrom(const std::string& src, const std::string& dir,
                           const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const std::string from = JoinPath(src, name);
    if (!IsFile(from)) continue;
    ASSIGN_OR_RETURN(std::string bytes, ReadFile(from));
    RETURN_IF_ERROR(WriteFileAtomically(JoinPath(dir, name), bytes));
  }
  return absl::OkStatus();
}

}  // namespace trainer
}  // namespace tunefleet
