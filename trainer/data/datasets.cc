#include "trainer/data/datasets.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/split_mix64.h"
#include "common/status_macros.h"
#include "trainer/data/line_reader.h"

namespace tunefleet {
namespace trainer {
namespace {

absl::Status LineError(const std::string& path, const Line& line, const std::string& message) {
  return trainer::LineError(path, line.number, message);
}

// Splits a line on tabs; an error when there are fewer than `min` (or more than `max`, if
// max >= 0) columns.
absl::StatusOr<std::vector<std::string>> Columns(const std::string& path, const Line& line,
                                                 size_t min, int max, const char* layout) {
  std::vector<std::string> cols = absl::StrSplit(line.text, '\t');
  if (cols.size() < min || (max >= 0 && cols.size() > static_cast<size_t>(max))) {
    const std::string want = max < 0                        ? absl::StrCat("at least ", min)
                             : max == static_cast<int>(min) ? absl::StrCat(min)
                                                            : absl::StrCat(min, " or ", max);
    return LineError(path, line,
                     absl::StrCat("expected ", want, " tab-separated columns (", layout, "), got ",
                                  cols.size()));
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

absl::StatusOr<int> BinaryLabel(const std::string& path, const Line& line, const std::string& text,
                                const char* what) {
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
  ASSIGN_OR_RETURN(
      std::vector<std::string> cols,
      Columns(path, line, 7, -1, "genre, file, year, id, score, sentence1, sentence2"));
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

}  // namespace

absl::StatusOr<std::vector<Example>> ReadStsb(const std::string& path, std::ostream* warnings) {
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

absl::StatusOr<std::vector<Example>> ReadPaws(const std::string& path, std::ostream* warnings) {
  return ReadRows(path, "id\tsentence1\t", PawsRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadMrpc(const std::string& path, std::ostream* warnings) {
  return ReadRows(path, "Quality\t", MrpcRow, warnings);
}

absl::StatusOr<std::vector<Example>> ReadDataset(const std::string& path, const std::string& format,
                                                 const ColumnOptions& columns,
                                                 std::ostream* warnings) {
  if (IsColumnFormat(format)) return ReadColumns(path, format, columns, warnings);
  if (!columns.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": format ", format,
                     " has fixed columns (text columns and a label column are "
                     "chosen only in jsonl, csv and tsv)"));
  }
  if (format == "stsb") return ReadStsb(path, warnings);
  if (format == "sick") return ReadSick(path, "", warnings);
  if (format == "paws") return ReadPaws(path, warnings);
  if (format == "mrpc") return ReadMrpc(path, warnings);
  return absl::InvalidArgumentError(absl::StrCat(path, ": unknown dataset format '", format,
                                                 "' (stsb, sick, paws, mrpc, jsonl, csv, tsv)"));
}

absl::StatusOr<std::vector<Example>> ReadDataset(const std::string& path, const std::string& format,
                                                 std::ostream* warnings) {
  return ReadDataset(path, format, ColumnOptions{}, warnings);
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
