#include "trainer/data/prompts.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";

// The first non-blank line of `path`, without the BOM and a final '\r', and its number.
absl::Status FirstLine(const std::string& path, std::string* text, int64_t* number) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot be read"));
  for (*number = 1; std::getline(in, *text); ++*number) {
    if (*number == 1 && absl::StartsWith(*text, kBom)) text->erase(0, 3);
    if (!text->empty() && text->back() == '\r') text->pop_back();
    if (!text->empty()) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(path, ": no examples"));
}

// A csv header line's fields: ',' between them, '"' quoting a field, "" a quote inside one.
std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back().push_back('"');
      ++i;
    } else if (c == '"' && (quoted || fields.back().empty())) {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back().push_back(c);
    }
  }
  return fields;
}

// The column names of a jsonl, csv or tsv file, in file order.
absl::StatusOr<std::vector<std::string>> FileColumns(const std::string& path,
                                                     const std::string& format) {
  std::string line;
  int64_t number = 0;
  if (absl::Status s = FirstLine(path, &line, &number); !s.ok()) return s;
  if (format == "csv") return SplitCsvLine(line);
  if (format == "tsv") return std::vector<std::string>(absl::StrSplit(line, '\t'));
  const nlohmann::ordered_json row = nlohmann::ordered_json::parse(line, nullptr, false);
  if (!row.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":", number, ": expected a JSON object (the columns of a row)"));
  }
  std::vector<std::string> names;
  for (const auto& [key, value] : row.items()) names.push_back(key);
  return names;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> TextColumnNames(const std::string& path,
                                                         const std::string& format,
                                                         const ColumnOptions& options) {
  if (!options.columns.empty()) return options.columns;
  if (!IsColumnFormat(format)) return std::vector<std::string>{"sentence1", "sentence2"};
  absl::StatusOr<std::vector<std::string>> found = FileColumns(path, format);
  if (!found.ok()) return found.status();
  std::vector<std::string> text;
  for (const std::string& name : *found) {
    const bool label = name == "score" || name == "label" ||
                       (!options.label_column.empty() && name == options.label_column);
    if (!name.empty() && !label) text.push_back(name);
  }
  return text;
}

std::vector<std::string> ColumnPrompts(const Prompts& prompts,
                                       const std::vector<std::string>& columns) {
  std::vector<std::string> out;
  for (const std::string& column : columns) {
    const auto it = prompts.by_column.find(column);
    out.push_back(!prompts.all.empty()            ? prompts.all
                  : it != prompts.by_column.end() ? it->second
                                                  : std::string());
  }
  return out;
}

absl::Status CheckPromptColumns(const Prompts& prompts, const std::vector<std::string>& columns,
                                const std::string& config, const std::string& path) {
  for (const auto& [name, prompt] : prompts.by_column) {
    if (std::find(columns.begin(), columns.end(), name) != columns.end()) continue;
    return absl::InvalidArgumentError(absl::StrCat(config, ": task.prompts: column \"", name,
                                                   "\" is not a text column of ", path, " (",
                                                   absl::StrJoin(columns, ", "), ")"));
  }
  return absl::OkStatus();
}

void ApplyPrompts(const std::vector<std::string>& column_prompts, std::vector<Example>* examples) {
  const auto prompt = [&](size_t i) {
    return i < column_prompts.size() ? column_prompts[i] : std::string();
  };
  for (Example& e : *examples) {
    e.a.insert(0, prompt(0));
    e.b.insert(0, prompt(1));
    for (size_t k = 0; k < e.negatives.size(); ++k) e.negatives[k].insert(0, prompt(2 + k));
  }
}

int64_t PromptLength(const Tokenizer& tokenizer, const std::string& prompt, int64_t max_len) {
  if (prompt.empty()) return 0;
  const Encoding encoding = tokenizer.Encode(prompt, max_len);
  if (encoding.ids.empty()) return 0;
  const SpecialTemplate& t = tokenizer.special_template();
  std::set<int32_t> special = {tokenizer.pad_id(), tokenizer.unk_id()};
  for (const std::vector<int32_t>* ids :
       {&t.single_prefix, &t.single_suffix, &t.pair_prefix, &t.pair_middle, &t.pair_suffix}) {
    special.insert(ids->begin(), ids->end());
  }
  for (const AddedToken& token : tokenizer.added_tokens()) special.insert(token.id);
  const int64_t n = static_cast<int64_t>(encoding.ids.size());
  return special.count(encoding.ids.back()) > 0 ? n - 1 : n;
}

std::vector<int64_t> PromptLengths(const Tokenizer& tokenizer,
                                   const std::vector<std::string>& prompts, int64_t max_len) {
  std::vector<int64_t> out;
  for (const std::string& prompt : prompts) out.push_back(PromptLength(tokenizer, prompt, max_len));
  return out;
}

}  // namespace trainer
}  // namespace tunefleet
