// The values of a JSONL dataset's columns that are lists (trainer/data/column_reader.h): a
// query's documents (a list of texts) and a vector label (a list of numbers), and how a value
// is quoted in an error.
// Thread-safety: free functions without state.
#ifndef TUNEFLEET_TRAINER_DATA_JSON_VALUES_H_
#define TUNEFLEET_TRAINER_DATA_JSON_VALUES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {

// `text` in an error: cut after 60 bytes (at a character boundary) with "...".
std::string Shown(absl::string_view text);

// A non-empty list of numbers only.
bool IsNumberList(const nlohmann::ordered_json& v);

// A non-empty list of non-empty strings; else InvalidArgument saying what is wrong ("is an
// empty list", "holds 3, not a non-empty string"), for the caller to prefix with the column.
absl::StatusOr<std::vector<std::string>> TextList(const nlohmann::ordered_json& v);
// A non-empty list of finite numbers; likewise.
absl::StatusOr<std::vector<double>> NumberList(const nlohmann::ordered_json& v);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_JSON_VALUES_H_
