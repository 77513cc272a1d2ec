#include "trainer/data/line_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "trainer/data/utf8_check.h"

namespace tunefleet {
namespace trainer {

absl::StatusOr<std::vector<Line>> ReadLines(const std::string& path, std::ostream* warnings,
                                            bool keep_blank) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder, not a dataset file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open dataset: ", std::strerror(errno)));
  }
  std::vector<Line> lines;
  std::string text;
  Utf8LineChecker utf8(path);
  for (int64_t number = 1; std::getline(in, text); ++number) {
    if (number == 1 && absl::StartsWith(text, "\xEF\xBB\xBF")) text.erase(0, 3);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty() && !keep_blank) continue;
    utf8.Check(number, &text);
    lines.push_back({number, std::move(text)});
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read dataset"));
  utf8.Report(warnings);
  return lines;
}

absl::Status LineError(absl::string_view path, int64_t line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": ", message));
}

absl::Status NoExamples(absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": no examples", what));
}

}  // namespace trainer
}  // namespace tunefleet
