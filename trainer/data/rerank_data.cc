#include "trainer/data/rerank_data.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/data/line_reader.h"

namespace tunefleet {
namespace trainer {
namespace {

// Appends the strings of `key` (a string, or a list of strings when `list_only`) to `out`.
absl::Status Strings(const nlohmann::json& j, const char* key, bool required, bool list_only,
                     const std::string& path, int64_t line, std::vector<std::string>* out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return required ? LineError(path, line, absl::StrCat("\"", key, "\" is missing"))
                    : absl::OkStatus();
  }
  if (it->is_string() && !list_only) {
    out->push_back(it->get<std::string>());
    return absl::OkStatus();
  }
  if (!it->is_array()) {
    return LineError(path, line,
                     absl::StrCat("\"", key, "\" is not a list of strings (", it->dump(), ")"));
  }
  for (const nlohmann::json& item : *it) {
    if (!item.is_string()) {
      return LineError(path, line,
                       absl::StrCat("\"", key, "\" holds ", item.dump(), ", not a string"));
    }
    out->push_back(item.get<std::string>());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<RerankQuery>> ReadRerankFile(const std::string& path,
                                                        std::ostream* warnings) {
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
  std::vector<RerankQuery> out;
  for (const Line& line : lines) {
    const nlohmann::json j = nlohmann::json::parse(line.text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
      return LineError(path, line.number, "not a JSON object");
    const auto query = j.find("query");
    if (query == j.end()) return LineError(path, line.number, "\"query\" is missing");
    if (!query->is_string() || query->get_ref<const std::string&>().empty()) {
      return LineError(path, line.number,
                       absl::StrCat("\"query\" is not a non-empty string (", query->dump(), ")"));
    }
    RerankQuery q;
    q.query = query->get<std::string>();
    RETURN_IF_ERROR(Strings(j, "positive", true, false, path, line.number, &q.docs));
    q.relevant.assign(q.docs.size(), 1);
    RETURN_IF_ERROR(Strings(j, "negative", false, true, path, line.number, &q.docs));
    q.relevant.resize(q.docs.size(), 0);
    if (q.docs.empty()) return LineError(path, line.number, "no documents to rank");
    out.push_back(std::move(q));
  }
  if (out.empty()) return NoExamples(path, " (JSONL rows with query, positive, negative)");
  return out;
}

RerankData TokenizeRerank(std::vector<RerankQuery> queries, const Tokenizer& tokenizer,
                          int64_t max_len, const std::string& source) {
  RerankData d;
  d.pad_id = tokenizer.pad_id();
  d.source = source;
  for (const RerankQuery& q : queries) {
    d.first.push_back(static_cast<int64_t>(d.pairs.size()));
    for (const std::string& doc : q.docs)
      d.pairs.push_back(tokenizer.EncodePair(q.query, doc, max_len));
  }
  d.queries = std::move(queries);
  return d;
}

}  // namespace trainer
}  // namespace tunefleet
