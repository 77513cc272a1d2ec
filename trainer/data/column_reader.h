// Datasets in sentence-transformers' layout: named columns, the text columns in order (anchor,
// positive, negatives...) and at most one score or label column, in JSONL, CSV or TSV.
//
// The files (the trainer YAML's task.format), all UTF-8; a UTF-8 BOM, a final '\r' on each line
// and blank lines are ignored:
//   jsonl  one JSON object a line; its keys are the columns.
//   csv    RFC 4180 as Python's csv module reads it by default (which is what Hugging Face
//          datasets' csv loader accepts): comma-separated, a field in double quotes may hold
//          commas, line breaks and "" for a quote; a quote inside an unquoted field is text.
//   tsv    tab-separated with NO quoting: a '"' is text (as the other readers, and Python's
//          csv.QUOTE_NONE); a field cannot hold a tab or a line break.
// csv and tsv need a header line naming the columns: the first line. A row with more fields
// than the header names is an error; one with fewer lacks the columns at the end.
//
// Which columns mean what:
//   Label columns. With options.label_column, that column (which every row must have) sets
//   score to its number and, when the number is a non-negative integer, label too. Without it,
//   a column named "score" sets score (a number) and one named "label" sets label (a
//   non-negative integer, "1.0" included); either or both may exist, and a row may leave them
//   empty (JSONL: leave the key out, or null): then that field stays unset.
//   Text columns. options.columns, in that order; else every column that is not "score",
//   "label" or label_column, in file order (JSONL: the key order of the first object; later
//   objects may order their keys differently); a csv/tsv header column without a name is never
//   one. The first is Example::a, the second b, the rest negatives. At least 2 are needed. Every
//   row must have each, as a non-empty string. Other columns are ignored.
//   JSONL lists. A key whose value in the first object is a list of numbers is the label
//   column (Example::values: a teacher's embedding, relevances, margins) unless task.columns
//   names it; then one text column suffices. With exactly two text columns the second may hold a
//   list of texts on every row (Example::docs: a query's documents, `trainer mine
//   --output_format labeled-list`'s rows).
// A header that names a column twice is an error; so is, without options.columns, one that
// names a text column with a number (a file without a header line, whose first row would be
// taken for one).
//
// Errors are one line naming the file (as given) and, where one is at fault, the line
// ("PATH:LINE: column \"negative\": missing", "... is empty", "... is not a string (3)",
// "PATH:LINE: column \"label\": 'yes' is not a non-negative integer"); a row's line is the line
// it starts on. Invalid UTF-8 is replaced and warned about as trainer/data/line_reader.h says.
// Thread-safety: free functions without shared state.
#ifndef TUNEFLEET_TRAINER_DATA_COLUMN_READER_H_
#define TUNEFLEET_TRAINER_DATA_COLUMN_READER_H_

#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "trainer/data/example.h"

namespace tunefleet {
namespace trainer {

struct ColumnOptions {
  std::vector<std::string> columns;  // the text columns in order; empty: all but the labels
  std::string label_column;          // empty: "score" and/or "label", where present
  bool empty() const { return columns.empty() && label_column.empty(); }
};

// Is `format` one ReadColumns reads (jsonl, csv, tsv)?
bool IsColumnFormat(const std::string& format);

// The examples of `path` in `format` (jsonl, csv or tsv). No examples is an error.
// `warnings`: where the invalid-UTF-8 warning goes (null: nowhere).
absl::StatusOr<std::vector<Example>> ReadColumns(const std::string& path, const std::string& format,
                                                 const ColumnOptions& options = {},
                                                 std::ostream* warnings = &std::cerr);

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_COLUMN_READER_H_
