// JSON as Python's json module reads and writes it, which is how Optuna 3.1's JournalStorage
// (hpo/journal/journal_format.h) and hpo's own study JSON (hpo/journal/study_json.h) hold values:
// - json.dumps with its default separators (", " and ": "), ASCII only (ensure_ascii), floats
//   as Python's repr (the shortest text that reads back as the same double), NaN / Infinity /
//   -Infinity as bare tokens.
// - json.loads, which accepts those bare tokens (nlohmann::json alone rejects them).
// Key order is kept, as Python's dicts keep it (PyJson is nlohmann::ordered_json).
// Thread-safety: pure functions.
#ifndef TUNEFLEET_COMMON_PY_JSON_H_
#define TUNEFLEET_COMMON_PY_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

using PyJson = nlohmann::ordered_json;

// Python's json.dumps of a float: repr ("0.0001", "1e-05", "2.0"), "NaN", "Infinity",
// "-Infinity".
std::string JsonFloat(double value);
// Python's json.dumps of a str (ensure_ascii): quoted, \uXXXX escapes beyond ASCII; invalid
// UTF-8 bytes become U+FFFD.
std::string JsonString(std::string_view text);
// Re-serializes JSON text (NaN / Infinity / -Infinity accepted) as Python's json.dumps would,
// keeping key order; InvalidArgument when it is not valid JSON.
absl::StatusOr<std::string> NormalizeJson(std::string_view text);

// Arrays and objects nested deeper than this are refused ("nested more than 1000 deep").
inline constexpr int kMaxJsonDepth = 1000;

// json.loads. InvalidArgument "not valid JSON (WHY)" when it is not, including NaN or Infinity
// used as an object key and nesting deeper than kMaxJsonDepth.
absl::StatusOr<PyJson> ParsePyJson(std::string_view text);
// json.dumps with its default separators.
std::string DumpPyJson(const PyJson& j);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_PY_JSON_H_
