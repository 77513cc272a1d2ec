// The lines of a text data file as every dataset reader takes them: a UTF-8 BOM, a final '\r' on
// each line and (unless asked for) blank lines dropped, invalid UTF-8 repaired with one warning,
// and the one-line errors that name the file and the line at fault.
//
// Invalid UTF-8 does not stop a reader: each line's maximal ill-formed byte sequences become
// U+FFFD before it is split or parsed, as Python's errors="replace" decodes them
// (trainer/data/utf8_check.h). A file with such lines gets one warning line on `warnings`
// (none when null), once the file is read and so before any error about its content:
//   trainer: warning: PATH:LINE: invalid UTF-8 (N lines; each bad byte sequence read as ...)
// Thread-safety: free functions without shared state.
#ifndef TUNEFLEET_TRAINER_DATA_LINE_READER_H_
#define TUNEFLEET_TRAINER_DATA_LINE_READER_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

struct Line {
  int64_t number = 0;  // 1-based, in the file
  std::string text;    // without the line break, the final '\r' and (line 1) the BOM
};

// The lines of `path`. keep_blank: blank lines too (a CSV quoted field may span them); else
// they are dropped. Errors: a folder, a file that cannot be opened or read.
absl::StatusOr<std::vector<Line>> ReadLines(const std::string& path, std::ostream* warnings,
                                            bool keep_blank = false);

// InvalidArgument "PATH:LINE: message".
absl::Status LineError(absl::string_view path, int64_t line, absl::string_view message);

// InvalidArgument "PATH: no examples<what>".
absl::Status NoExamples(absl::string_view path, absl::string_view what = "");

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_LINE_READER_H_
