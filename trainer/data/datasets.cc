#include "trainer/data/datasets.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/split_mix64.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/data/utf8_check.h"

namespace tunefleet {
namespace trainer {
namespace {

struct Line {
  int64_t number;  // 1-based
  std::string text;
};

// The non-blank lines of `path`, without a BOM or a final '\r', invalid UTF-8 replaced (one
// warning on `warnings` for the file).
absl::StatusOr<std::vector<Line>> ReadLines(const std::string& path, std::ostream* warnings) {
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
    if (text.empty()) continue;
    utf8.Check(number, &text);
    lines.push_back({number, std::move(text)});
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read dataset"));
  utf8.Report(warnings);
  return lines;
}

absl::Status LineError(const std::string& path, const Line& line, const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ":", line.number, ": ", message));
}

absl::Status NoExamples(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": no examples", what));
}

// Splits a line on tabs; an error when there are fewer than `min` (or more than `max`, if
// max >= 0) columns.
absl::StatusOr<std::vector<std::string>> Columns(const std::string& path, const Line& line,
                                                 size_t min, int max, const char* layout) {
  std::vector<std::string> cols = absl::StrSplit(line.text, '\t');
  if (cols.size() < min || (max >= 0 && cols.size() > static_cast<size_t>(max))) {
    const std::string want = max < 0 ? absl::StrCat("at least ", min)
                             : max == static_cast<int>(min) ? absl::StrCat(min)
                                                             : absl::StrCat(min, " or ", max);
    return LineError(path, line, absl::StrCat("expected ", want, " tab-separated columns (",
                                              layout, "), got ", cols.size()));
  }
  return cols;
}

absl::StatusOr<double> Score(const std::string& path, const Line& line, const std::string& text,
                             const char* what) {
  double value;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) {
    return LineError(path, line, absl::StrCat(what, " '", text, "' is not a number"));
  }
  return value;
}

absl::StatusOr<int> BinaryLabel(const std::string& path, const Line& line,
                                const std::string& text, const char* what) {
  if (text == "0") return 0;
  if (text == "1") return 1;
  return LineError(path, line, absl::StrCat(what, " '", text, "' is not 0 or 1"));
}

// One line of a one-example-a-line format as an Example, or the error naming that line.
using RowParser = absl::StatusOr<Example> (*)(const std::string& path, const Line& line);

// The examples of a one-example-a-line file: each line through `parse`, but for a first line
// that starts with `header` (when not empty), which is skipped. No examples is an error.
absl::StatusOr<std::vector<Example>> ReadRows(const std::string& path, absl::string_view header,
                                              RowParser parse, std::ostream* warnings) {
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
  std::vector<Example> out;
  out.reserve(lines.size());
  for (const Line& line : lines) {
    if (!header.empty() && line.number == 1 && absl::StartsWith(line.text, header)) continue;
    ASSIGN_OR_RETURN(Example example, parse(path, line));
    out.push_back(std::move(example));
  }
  if (out.empty()) return NoExamples(path, "");
  return out;
}

absl::StatusOr<Example> StsbRow(const std::string& path, const Line& line) {
  ASSIGN_OR_RETURN(std::vector<std::string> cols,
                   Columns(path, line, 7, -1,
                           "genre, file, year, id, score, sentence1, sentence2"));
  ASSIGN_OR_RETURN(double score, Score(path, line, cols[4], "score"));
  if (score < 0 || score > 5) {
    return LineError(path, line, absl::StrCat("score ", cols[4], " is outside [0, 5]"));
  }
  return Example{std::move(cols[5]), std::move(cols[6]), score, kNoLabel};
}

absl::StatusOr<Example> PawsRow(const std::string& path, const Line& line) {
  ASSIGN_OR_RETURN(std::vector<std::string> cols,
                   Columns(path, line, 4, 4, "id, sentence1, sentence2, label"));
  ASSIGN_OR_RETURN(int label, BinaryLabel(path, line, cols[3], "label"));
  return Example{std::move(cols[1]), std::move(cols[2]), std::nan(""), label};
}

absl::StatusOr<Example> MrpcRow(const std::string& path, const Line& line) {
  ASSIGN_OR_RETURN(std::vector<std::string> cols,
                   Columns(path, line, 5, 5, "Quality, #1 ID, #2 ID, #1 String, #2 String"));
  ASSIGN_OR_RETURN(int label, BinaryLabel(path, line, cols[0], "Quality"));
  return Example{std::move(cols[3]), std::move(cols[4]), std::nan(""), label};
}

absl::StatusOr<Example> TsvRow(const std::string& path, const Line& line) {
  ASSIGN_OR_RETURN(std::vector<std::string> cols,
                   Columns(path, line, 2, 3, "sentence1, sentence2[, label_or_score]"));
  Example e{std::move(cols[0]), std::move(cols[1])};
  if (cols.size() == 3) {
    ASSIGN_OR_RETURN(e.score, Score(path, line, cols[2], "label_or_score"));
    int label;
    if (absl::SimpleAtoi(cols[2], &label)) e.label = label;
  }
  return e;
}

absl::StatusOr<Example> JsonlRow(const std::string& path, const Line& line) {
  nlohmann::json j = nlohmann::json::parse(line.text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return LineError(path, line, "not a JSON object");
  }
  Example e;
  for (auto [key, field] : {std::pair<const char*, std::string*>{"sentence1", &e.a},
                            {"sentence2", &e.b}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) {
      return LineError(path, line, absl::StrCat("\"", key, "\" must be a string"));
    }
    *field = it->get<std::string>();
  }
  if (auto it = j.find("label"); it != j.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
        it->get<int64_t>() > std::numeric_limits<int>::max()) {
      return LineError(path, line,
                       absl::StrCat("\"label\" must be a non-negative integer, got ", it->dump()));
    }
    e.label = it->get<int>();
  }
  if (auto it = j.find("score"); it != j.end()) {
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return LineError(path, line, absl::StrCat("\"score\" must be a number, got ", it->dump()));
    }
    e.score = it->get<double>();
  }
  return e;
}

}  // namespace

absl::StatusOr<std::vector<Example>> ReadStsb(const std::string& path,
                                              std::ostream* warnings) {
  return ReadRows(path, /*header=*/"", StsbRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadSick(const std::string& path, const std::string& split,
                                              std::ostream* warnings) {
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
  if (lines.empty()) return NoExamples(path, "");
  // Columns by header name.
  std::vector<std::string> header = absl::StrSplit(lines[0].text, '\t');
  auto find = [&](std::initializer_list<const char*> names) -> int {
    for (size_t i = 0; i < header.size(); ++i) {
      for (const char* name : names) {
        if (header[i] == name) return static_cast<int>(i);
      }
    }
    return -1;
  };
  const int a = find({"sentence_A"}), b = find({"sentence_B"});
  const int label = find({"entailment_label", "entailment_judgment"});
  const int score = find({"relatedness_score"}), set = find({"SemEval_set"});
  if (a < 0 || b < 0 || label < 0 || score < 0) {
    return LineError(path, lines[0],
                     "expected a header naming sentence_A, sentence_B, entailment_label and "
                     "relatedness_score (tab-separated)");
  }
  if (!split.empty() && set < 0) {
    return LineError(path, lines[0],
                     absl::StrCat("no SemEval_set column to select split ", split, " by"));
  }
  static const std::map<std::string, int> kLabels = {
      {"ENTAILMENT", 0}, {"NEUTRAL", 1}, {"CONTRADICTION", 2}};
  const size_t needed = std::max({a, b, label, score, set}) + 1;
  std::vector<Example> out;
  out.reserve(lines.size());
  for (size_t i = 1; i < lines.size(); ++i) {
    const Line& line = lines[i];
    ASSIGN_OR_RETURN(std::vector<std::string> cols,
                     Columns(path, line, needed, -1, "as the header names them"));
    if (!split.empty() && cols[set] != split) continue;
    auto it = kLabels.find(cols[label]);
    if (it == kLabels.end()) {
      return LineError(path, line,
                       absl::StrCat("entailment label '", cols[label],
                                    "' is not ENTAILMENT, NEUTRAL or CONTRADICTION"));
    }
    ASSIGN_OR_RETURN(double relatedness, Score(path, line, cols[score], "relatedness_score"));
    out.push_back({std::move(cols[a]), std::move(cols[b]), relatedness, it->second});
  }
  if (out.empty()) {
    return NoExamples(path, split.empty() ? "" : absl::StrCat(" in SemEval_set ", split));
  }
  return out;
}

absl::StatusOr<std::vector<Example>> ReadPaws(const std::string& path,
                                              std::ostream* warnings) {
  return ReadRows(path, "id\tsentence1\t", PawsRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadMrpc(const std::string& path,
                                              std::ostream* warnings) {
  return ReadRows(path, "Quality\t", MrpcRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadTsv(const std::string& path,
                                             std::ostream* warnings) {
  return ReadRows(path, "sentence1\tsentence2", TsvRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadJsonl(const std::string& path,
                                               std::ostream* warnings) {
  return ReadRows(path, /*header=*/"", JsonlRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadDataset(const std::string& path,
                                                 const std::string& format,
                                                 std::ostream* warnings) {
  if (format == "stsb") return ReadStsb(path, warnings);
  if (format == "sick") return ReadSick(path, "", warnings);
  if (format == "paws") return ReadPaws(path, warnings);
  if (format == "mrpc") return ReadMrpc(path, warnings);
  if (format == "tsv") return ReadTsv(path, warnings);
  if (format == "jsonl") return ReadJsonl(path, warnings);
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unknown dataset format '", format, "' (stsb, sick, paws, mrpc, tsv, jsonl)"));
}

std::vector<int64_t> EpochOrder(int64_t n, uint64_t seed, int64_t epoch, bool shuffle) {
  std::vector<int64_t> order;
  if (n <= 0) return order;
  order.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  if (!shuffle) return order;
  uint64_t state = seed ^ (kSplitMix64Gamma * (static_cast<uint64_t>(epoch) + 1));
  for (int64_t i = n - 1; i > 0; --i) {
    const uint64_t bound = static_cast<uint64_t>(i) + 1;
    const uint64_t threshold = (0 - bound) % bound;  // 2^64 mod bound
    uint64_t r;
    do {
      r = SplitMix64Next(&state);
    } while (r < threshold);
    std::swap(order[i], order[static_cast<size_t>(r % bound)]);
  }
  return order;
}

std::vector<int64_t> RankShard(const std::vector<int64_t>& order, int rank, int world) {
  if (world <= 1 || order.empty()) return order;
  const size_t n = order.size();
  const size_t per_rank = (n + static_cast<size_t>(world) - 1) / static_cast<size_t>(world);
  std::vector<int64_t> out;
  out.reserve(per_rank);
  for (size_t i = static_cast<size_t>(rank); i < per_rank * static_cast<size_t>(world);
       i += static_cast<size_t>(world)) {
    out.push_back(order[i % n]);
  }
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
