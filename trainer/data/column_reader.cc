#include "trainer/data/column_reader.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/data/json_values.h"
#include "trainer/data/line_reader.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr absl::string_view kScore = "score";
constexpr absl::string_view kLabel = "label";

// "\"a\", \"b\"": column names in messages.
std::string Names(const std::vector<std::string>& names) {
  return absl::StrJoin(names, ", ", [](std::string* out, const std::string& name) {
    absl::StrAppend(out, "\"", name, "\"");
  });
}

absl::Status ColumnError(const std::string& path, int64_t line, absl::string_view column,
                         absl::string_view message) {
  return LineError(path, line, absl::StrCat("column \"", column, "\": ", message));
}

// Fewer than 2 text columns: `found` are the file's columns (the header, the first object's
// keys) and `text` those taken as text.
absl::Status TooFewTextColumns(const std::string& path, int64_t line,
                               const std::vector<std::string>& text,
                               const std::vector<std::string>& found, const char* found_what) {
  return LineError(path, line,
                   absl::StrCat(text.size(), text.size() == 1 ? " text column" : " text columns",
                                text.empty() ? "" : absl::StrCat(" (", Names(text), ")"),
                                "; at least 2 are needed, the first two being the pair (",
                                found_what, ": ", found.empty() ? "none" : Names(found), ")"));
}

bool IsLabelValue(double v) {
  return std::isfinite(v) && v == std::floor(v) && v >= 0 &&
         v <= static_cast<double>(std::numeric_limits<int>::max());
}

// Which columns are what, by name.
struct Layout {
  std::vector<std::string> text;  // in order: a, b, negatives
  std::string label_column;       // options.label_column (empty: none given)
  bool score = false;             // use a "score" column (no label_column, not a text column)
  bool label = false;             // use a "label" column (likewise)

  // The label columns to read, in order: label_column, then "score" and "label".
  std::vector<std::string> LabelColumns() const {
    std::vector<std::string> names;
    if (!label_column.empty()) names.push_back(label_column);
    if (score) names.emplace_back(kScore);
    if (label) names.emplace_back(kLabel);
    return names;
  }

  bool IsText(absl::string_view name) const {
    for (const std::string& t : text) {
      if (t == name) return true;
    }
    return false;
  }
};

// Whether `name` is one of the label column names (so not a default text column).
bool IsLabelName(const std::string& name, const ColumnOptions& options) {
  return name == kScore || name == kLabel ||
         (!options.label_column.empty() && name == options.label_column);
}

// The layout for a file whose columns are `found` (in file order). Without a label_column,
// "score" and "label" are label columns when found (`any_row`: whether or not found, as a JSONL
// object may have keys the first one lacks), unless chosen as text.
Layout MakeLayout(const std::vector<std::string>& found, const ColumnOptions& options,
                  bool any_row) {
  Layout layout;
  layout.label_column = options.label_column;
  if (!options.columns.empty()) {
    layout.text = options.columns;
  } else {
    for (const std::string& name : found) {
      if (!name.empty() && !IsLabelName(name, options)) layout.text.push_back(name);
    }
  }
  if (options.label_column.empty()) {
    for (const std::string& name : found) {
      if (name == kScore) layout.score = true;
      if (name == kLabel) layout.label = true;
    }
    if (any_row) layout.score = layout.label = true;
    if (layout.IsText(kScore)) layout.score = false;
    if (layout.IsText(kLabel)) layout.label = false;
  }
  return layout;
}

// Puts the i-th text column's value in place.
void SetText(Example& e, size_t i, std::string text) {
  if (i == 0) {
    e.a = std::move(text);
  } else if (i == 1) {
    e.b = std::move(text);
  } else {
    e.negatives.push_back(std::move(text));
  }
}

// A label column's number into the example: label_column sets score and, when it is a
// non-negative integer, label; "score" sets score; "label" must be a non-negative integer.
// `shown` is the value as the error quotes it.
absl::Status SetLabelValue(const std::string& path, int64_t line, absl::string_view column,
                           std::optional<double> value, absl::string_view shown,
                           const Layout& layout, Example& e) {
  const bool is_label = layout.label_column.empty() && column == kLabel;
  if (is_label) {
    if (!value || !IsLabelValue(*value)) {
      return ColumnError(
          path, line, column,
          absl::StrCat(Shown(shown), " is not a non-negative integer",
                       value && std::isfinite(*value)
                           ? " (a score? name its column \"score\", or make it the label column)"
                           : ""));
    }
    e.label = static_cast<int>(*value);
    return absl::OkStatus();
  }
  if (!value || !std::isfinite(*value)) {
    return ColumnError(path, line, column, absl::StrCat(Shown(shown), " is not a number"));
  }
  e.score = *value;
  if (!layout.label_column.empty() && IsLabelValue(*value)) e.label = static_cast<int>(*value);
  return absl::OkStatus();
}

// ---- csv and tsv ----

struct Record {
  int64_t line = 0;  // where it starts
  std::vector<std::string> fields;
};

// Python csv's default dialect (excel): ',' between fields, '"' quotes a field, "" in a quoted
// field is a quote, a quoted field goes on over line breaks (read as '\n'), a quote in an
// unquoted field (or after a closing quote) is text. Blank lines between records are skipped.
absl::StatusOr<std::vector<Record>> SplitCsv(const std::string& path,
                                             const std::vector<Line>& lines) {
  enum State { kStartField, kInField, kInQuoted, kQuoteInQuoted };
  std::vector<Record> out;
  Record record;
  std::string field;
  State state = kStartField;
  bool open = false;  // inside a record that started on an earlier line
  auto end_field = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
    state = kStartField;
  };
  for (const Line& line : lines) {
    if (open) {
      field.push_back('\n');  // a quoted field spanning lines
    } else {
      if (line.text.empty()) continue;
      record = Record{line.number, {}};
      field.clear();
      state = kStartField;
    }
    for (const char c : line.text) {
      switch (state) {
        case kStartField:
          if (c == '"') {
            state = kInQuoted;
          } else if (c == ',') {
            end_field();
          } else {
            field.push_back(c);
            state = kInField;
          }
          break;
        case kInField:
          if (c == ',') {
            end_field();
          } else {
            field.push_back(c);
          }
          break;
        case kInQuoted:
          if (c == '"') {
            state = kQuoteInQuoted;
          } else {
            field.push_back(c);
          }
          break;
        case kQuoteInQuoted:
          if (c == '"') {
            field.push_back('"');
            state = kInQuoted;
          } else if (c == ',') {
            end_field();
          } else {
            field.push_back(c);
            state = kInField;
          }
          break;
      }
    }
    open = state == kInQuoted;
    if (open) continue;
    end_field();
    out.push_back(std::move(record));
  }
  if (open) {
    return LineError(path, record.line,
                     "a quoted field is not closed (no '\"' before the end of the file)");
  }
  return out;
}

std::vector<Record> SplitTsv(const std::vector<Line>& lines) {
  std::vector<Record> out;
  out.reserve(lines.size());
  for (const Line& line : lines) {
    out.push_back({line.number, absl::StrSplit(line.text, '\t')});
  }
  return out;
}

// Where a csv or tsv file's columns are, from its header line.
struct HeaderColumns {
  struct LabelColumn {
    std::string name;
    size_t index;
  };
  Layout layout;
  std::vector<size_t> text;  // the field index of each of layout.text
  std::vector<LabelColumn> labels;
};

// Reads the header: each name once; options.columns and options.label_column in it; at least 2
// text columns, none named like a number (a file without a header line).
absl::StatusOr<HeaderColumns> ReadHeader(const std::string& path, const std::string& format,
                                         const Record& header, const ColumnOptions& options) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < header.fields.size(); ++i) {
    const std::string& name = header.fields[i];
    if (name.empty()) continue;
    if (!index.emplace(name, i).second) {
      return LineError(path, header.line,
                       absl::StrCat("the header names column \"", name, "\" twice"));
    }
  }
  const auto in_header = [&](const std::string& name) { return index.count(name) > 0; };
  for (const std::string& name : options.columns) {
    if (!in_header(name)) {
      return LineError(
          path, header.line,
          absl::StrCat("column \"", name, "\" is not in the header (", Names(header.fields), ")"));
    }
  }
  if (!options.label_column.empty() && !in_header(options.label_column)) {
    return LineError(path, header.line,
                     absl::StrCat("label column \"", options.label_column,
                                  "\" is not in the header (", Names(header.fields), ")"));
  }
  HeaderColumns columns;
  columns.layout = MakeLayout(header.fields, options, /*any_row=*/false);
  const Layout& layout = columns.layout;
  if (options.columns.empty()) {
    for (const std::string& name : layout.text) {
      double number;
      if (absl::SimpleAtod(name, &number)) {
        return LineError(path, header.line,
                         absl::StrCat("the header names a column \"", name, "\": ", format,
                                      " files need a first line naming the columns (e.g. "
                                      "anchor, positive, label)"));
      }
    }
  }
  if (layout.text.size() < 2) {
    return TooFewTextColumns(path, header.line, layout.text, header.fields, "the header's columns");
  }
  for (const std::string& name : layout.text) columns.text.push_back(index.at(name));
  for (const std::string& name : layout.LabelColumns()) {
    columns.labels.push_back({name, index.at(name)});
  }
  return columns;
}

// One row below the header as an example (its text fields moved out of `row`).
absl::StatusOr<Example> RowExample(const std::string& path, const std::string& format,
                                   size_t header_fields, const HeaderColumns& columns,
                                   Record& row) {
  const Layout& layout = columns.layout;
  if (row.fields.size() > header_fields) {
    return LineError(
        path, row.line,
        absl::StrCat(row.fields.size(), " fields, but the header names ", header_fields, " columns",
                     format == "tsv" ? " (tsv has no quoting: a tab in a text "
                                       "starts a new field)"
                                     : ""));
  }
  Example e;
  for (size_t k = 0; k < columns.text.size(); ++k) {
    if (columns.text[k] >= row.fields.size()) {
      return ColumnError(path, row.line, layout.text[k], "missing");
    }
    std::string& value = row.fields[columns.text[k]];
    if (value.empty()) return ColumnError(path, row.line, layout.text[k], "is empty");
    SetText(e, k, std::move(value));
  }
  for (const HeaderColumns::LabelColumn& column : columns.labels) {
    const bool present = column.index < row.fields.size() && !row.fields[column.index].empty();
    if (!present) {
      if (column.name != layout.label_column) continue;  // "score", "label": may be left out
      return ColumnError(path, row.line, column.name,
                         column.index < row.fields.size() ? "is empty" : "missing");
    }
    const std::string& value = row.fields[column.index];
    double number;
    std::optional<double> parsed;
    if (absl::SimpleAtod(value, &number)) parsed = number;
    RETURN_IF_ERROR(SetLabelValue(path, row.line, column.name, parsed,
                                  absl::StrCat("'", value, "'"), layout, e));
  }
  return e;
}

absl::StatusOr<std::vector<Example>> FromRecords(const std::string& path, const std::string& format,
                                                 std::vector<Record> records,
                                                 const ColumnOptions& options) {
  if (records.empty()) return NoExamples(path, " (and no header line naming the columns)");
  const Record& header = records[0];
  ASSIGN_OR_RETURN(HeaderColumns columns, ReadHeader(path, format, header, options));
  std::vector<Example> out;
  out.reserve(records.size() - 1);
  for (size_t r = 1; r < records.size(); ++r) {
    ASSIGN_OR_RETURN(Example e,
                     RowExample(path, format, header.fields.size(), columns, records[r]));
    out.push_back(std::move(e));
  }
  if (out.empty()) return NoExamples(path, " (only the header line)");
  return out;
}

// ---- jsonl ----

bool IsChosenText(const std::string& name, const ColumnOptions& options) {
  for (const std::string& c : options.columns) {
    if (c == name) return true;
  }
  return false;
}

// The layout of a JSONL file from its first object's keys, in order; a key holding a list of
// numbers is the label (`vector_column`), not a text column.
absl::StatusOr<Layout> FirstObjectLayout(const std::string& path, int64_t line,
                                         const nlohmann::ordered_json& j,
                                         const ColumnOptions& options, std::string* vector_column) {
  std::vector<std::string> keys, all_keys;
  for (auto it = j.begin(); it != j.end(); ++it) {
    all_keys.push_back(it.key());
    if (!IsNumberList(*it) || IsChosenText(it.key(), options)) {
      keys.push_back(it.key());
      continue;
    }
    if (!vector_column->empty() && options.label_column != it.key() &&
        options.label_column != *vector_column) {
      return LineError(
          path, line,
          absl::StrCat("two columns hold lists of numbers (\"", *vector_column, "\", \"", it.key(),
                       "\"): name the label with task.label_column"));
    }
    if (vector_column->empty() || options.label_column == it.key()) *vector_column = it.key();
  }
  Layout layout = MakeLayout(keys, options, /*any_row=*/true);
  if (!vector_column->empty() && options.label_column.empty()) {
    layout.score = layout.label = false;  // the list is the label
    layout.label_column = *vector_column;
  }
  if (layout.text.size() < (vector_column->empty() ? 2u : 1u)) {
    return TooFewTextColumns(path, line, layout.text, all_keys, "the first object's keys");
  }
  return layout;
}

absl::StatusOr<std::vector<Example>> ReadJsonLines(const std::string& path,
                                                   const ColumnOptions& options,
                                                   std::ostream* warnings) {
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
  std::vector<Example> out;
  out.reserve(lines.size());
  Layout layout;
  std::vector<std::string> label_columns;
  std::string vector_column;  // the label column holding a list of numbers, if any
  for (const Line& line : lines) {
    nlohmann::ordered_json j =
        nlohmann::ordered_json::parse(line.text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return LineError(path, line.number, "not a JSON object");
    }
    if (out.empty()) {  // the first object: its keys, in order, are the columns
      ASSIGN_OR_RETURN(layout, FirstObjectLayout(path, line.number, j, options, &vector_column));
      label_columns = layout.LabelColumns();
    }
    Example e;
    for (size_t k = 0; k < layout.text.size(); ++k) {
      const std::string& name = layout.text[k];
      auto it = j.find(name);
      if (it == j.end()) return ColumnError(path, line.number, name, "missing");
      if (it->is_array() && k == 1 && layout.text.size() == 2) {
        absl::StatusOr<std::vector<std::string>> docs = TextList(*it);
        if (!docs.ok()) return ColumnError(path, line.number, name, docs.status().message());
        e.docs = *std::move(docs);
        continue;
      }
      if (!it->is_string()) {
        return ColumnError(path, line.number, name,
                           absl::StrCat("is not a string (", Shown(it->dump()), ")"));
      }
      std::string text = it->get<std::string>();
      if (text.empty()) return ColumnError(path, line.number, name, "is empty");
      SetText(e, k, std::move(text));
    }
    for (const std::string& name : label_columns) {
      auto it = j.find(name);
      const bool given = name == layout.label_column;
      if (it == j.end()) {
        if (given) return ColumnError(path, line.number, name, "missing");
        continue;
      }
      if (it->is_null() && !given) continue;
      if (name == vector_column) {
        absl::StatusOr<std::vector<double>> values = NumberList(*it);
        if (!values.ok()) return ColumnError(path, line.number, name, values.status().message());
        e.values = *std::move(values);
        continue;
      }
      std::optional<double> value;
      if (it->is_number()) value = it->get<double>();
      RETURN_IF_ERROR(SetLabelValue(path, line.number, name, value, it->dump(), layout, e));
    }
    out.push_back(std::move(e));
  }
  if (out.empty()) return NoExamples(path);
  return out;
}

}  // namespace

bool IsColumnFormat(const std::string& format) {
  return format == "jsonl" || format == "csv" || format == "tsv";
}

absl::StatusOr<std::vector<Example>> ReadColumns(const std::string& path, const std::string& format,
                                                 const ColumnOptions& options,
                                                 std::ostream* warnings) {
  if (format == "jsonl") return ReadJsonLines(path, options, warnings);
  if (format == "csv") {
    ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings, /*keep_blank=*/true));
    ASSIGN_OR_RETURN(std::vector<Record> records, SplitCsv(path, lines));
    return FromRecords(path, format, std::move(records), options);
  }
  if (format == "tsv") {
    ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
    return FromRecords(path, format, SplitTsv(lines), options);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": format '", format, "' has no named columns (jsonl, csv, tsv)"));
}

}  // namespace trainer
}  // namespace tunefleet
