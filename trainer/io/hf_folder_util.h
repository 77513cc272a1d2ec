// Helpers for the files of Hugging Face and sentence-transformers model folders: their JSON files
// (config.json, model.safetensors.index.json, modules.json, ...) read with typed keys and
// one-line errors that name the file and the key, written as transformers writes them; and
// copying files from another folder.
// Thread-safety: stateless (the file system is shared).
#ifndef TUNEFLEET_TRAINER_IO_HF_FOLDER_UTIL_H_
#define TUNEFLEET_TRAINER_IO_HF_FOLDER_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {

using Json = nlohmann::json;

// `text` parsed; it must be an object or an array. Errors: "PATH: invalid JSON: ..." (the
// parser's message on one line) or "PATH: expected a JSON object".
absl::StatusOr<Json> ParseJsonFile(absl::string_view path, const std::string& text);
// The file at `path` read (common/file_util.h's errors) and parsed as above.
absl::StatusOr<Json> ReadJsonFile(const std::string& path);

// A value for an error message: its JSON text, cut to 40 characters ("...").
std::string JsonBrief(const Json& j);
// InvalidArgument "PATH: key \"KEY\" WHAT".
absl::Status JsonKeyError(absl::string_view path, const char* key, absl::string_view what);
// The integer `key` of object `j` (>= min) into `out`; missing, another type or out of range is
// a JsonKeyError.
absl::Status GetJsonInt(const Json& j, absl::string_view path, const char* key, int64_t min,
                        int64_t* out);
// The number `key` of object `j`, in [min, max], into `out`.
absl::Status GetJsonDouble(const Json& j, absl::string_view path, const char* key, double min,
                           double max, double* out);

// `j` as transformers writes its JSON files: indent 2 (keys sorted), a final newline.
std::string JsonText(const Json& j);

// Copies each file of `names` that `src` holds into `dir` (each written atomically).
absl::Status CopyFilesFrom(const std::string& src, const std::string& dir,
                           const std::vector<std::string>& names);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_IO_HF_FOLDER_UTIL_H_
