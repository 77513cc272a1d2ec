#include "trainer/data/retrieval_data.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "trainer/data/line_reader.h"

namespace tunefleet {
namespace trainer {
namespace {

using IdIndex = std::unordered_map<std::string, int64_t>;

// The ids and texts of a queries.jsonl or corpus.jsonl, in file order, with each id's index.
struct IdTexts {
  std::vector<std::string> ids, texts;
  std::vector<int64_t> lines;  // of each entry
  IdIndex index;
};

absl::StatusOr<IdTexts> ReadIdTexts(const std::string& path, const char* what,
                                    std::ostream* warnings) {
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, warnings));
  IdTexts out;
  for (const Line& line : lines) {
    const nlohmann::json j = nlohmann::json::parse(line.text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return LineError(path, line.number, "not a JSON object");
    }
    const auto id = j.find("_id");
    if (id == j.end()) return LineError(path, line.number, "\"_id\" is missing");
    std::string id_text;
    if (id->is_string()) {
      id_text = id->get<std::string>();
    } else if (id->is_number()) {
      id_text = id->dump();
    } else {
      return LineError(path, line.number,
                       absl::StrCat("\"_id\" is not a string or a number (", id->dump(), ")"));
    }
    const auto text = j.find("text");
    if (text == j.end()) return LineError(path, line.number, "\"text\" is missing");
    if (!text->is_string()) {
      return LineError(path, line.number,
                       absl::StrCat("\"text\" is not a string (", text->dump(), ")"));
    }
    if (text->get_ref<const std::string&>().empty()) {
      return LineError(path, line.number,
                       absl::StrCat("\"text\" of ", what, " '", id_text, "' is empty"));
    }
    const auto [it, inserted] = out.index.emplace(id_text, static_cast<int64_t>(out.ids.size()));
    if (!inserted) {
      return LineError(path, line.number,
                       absl::StrCat("duplicate ", what, " id '", id_text, "' (first on line ",
                                    out.lines[it->second], ")"));
    }
    out.ids.push_back(std::move(id_text));
    out.texts.push_back(text->get<std::string>());
    out.lines.push_back(line.number);
  }
  if (out.ids.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no ", what, "s"));
  return out;
}

}  // namespace

absl::StatusOr<RetrievalSet> ReadRetrievalFiles(const std::string& queries_path,
                                                const std::string& corpus_path,
                                                const std::string& qrels_path,
                                                std::ostream* warnings) {
  ASSIGN_OR_RETURN(IdTexts queries, ReadIdTexts(queries_path, "query", warnings));
  ASSIGN_OR_RETURN(IdTexts corpus, ReadIdTexts(corpus_path, "corpus entry", warnings));
  ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(qrels_path, warnings));
  std::vector<std::vector<int64_t>> relevant(queries.ids.size());
  for (const Line& line : lines) {
    std::vector<std::string> cols = absl::StrSplit(line.text, '\t');
    if (line.number == 1 && !cols.empty() && cols[0] == "query-id") continue;  // the header
    if (cols.size() != 3) {
      return LineError(qrels_path, line.number,
                       absl::StrCat("expected 3 tab-separated columns (query-id, corpus-id, "
                                    "score), got ",
                                    cols.size()));
    }
    double score;
    if (!absl::SimpleAtod(cols[2], &score) || std::isnan(score)) {
      return LineError(qrels_path, line.number,
                       absl::StrCat("score '", cols[2], "' is not a number"));
    }
    const auto q = queries.index.find(cols[0]);
    if (q == queries.index.end()) {
      return LineError(qrels_path, line.number,
                       absl::StrCat("query id '", cols[0], "' is not in ", queries_path));
    }
    const auto c = corpus.index.find(cols[1]);
    if (c == corpus.index.end()) {
      return LineError(qrels_path, line.number,
                       absl::StrCat("corpus id '", cols[1], "' is not in ", corpus_path));
    }
    if (!(score > 0)) continue;
    std::vector<int64_t>& r = relevant[q->second];
    if (std::find(r.begin(), r.end(), c->second) == r.end()) r.push_back(c->second);
  }
  RetrievalSet set;
  for (size_t i = 0; i < queries.ids.size(); ++i) {
    if (relevant[i].empty()) continue;  // as the evaluator's __init__ drops it
    set.query_ids.push_back(std::move(queries.ids[i]));
    set.queries.push_back(std::move(queries.texts[i]));
    set.relevant.push_back(std::move(relevant[i]));
  }
  if (set.queries.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(qrels_path, ": no query of ", queries_path,
                                                   " has a relevant corpus entry (score > 0)"));
  }
  set.corpus_ids = std::move(corpus.ids);
  set.corpus = std::move(corpus.texts);
  return set;
}

absl::StatusOr<RetrievalSet> RetrievalFromPairs(const std::vector<Example>& rows,
                                                const std::string& source) {
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no examples"));
  IdIndex anchors, texts;
  std::vector<std::string> anchor_texts;
  std::vector<std::vector<int64_t>> relevant;
  RetrievalSet set;
  auto corpus_index = [&](const std::string& text) {
    const auto [it, inserted] = texts.emplace(text, static_cast<int64_t>(set.corpus.size()));
    if (inserted) set.corpus.push_back(text);
    return it->second;
  };
  for (const Example& row : rows) {
    const auto [a, new_anchor] = anchors.emplace(row.a, static_cast<int64_t>(anchor_texts.size()));
    if (new_anchor) {
      anchor_texts.push_back(row.a);
      relevant.emplace_back();
    }
    const int64_t b = corpus_index(row.b);
    for (const std::string& negative : row.negatives) corpus_index(negative);
    if (row.HasLabel() && row.label == 0) continue;  // a non-paraphrase: b is not relevant
    std::vector<int64_t>& r = relevant[a->second];
    if (std::find(r.begin(), r.end(), b) == r.end()) r.push_back(b);
  }
  for (size_t i = 0; i < anchor_texts.size(); ++i) {
    if (relevant[i].empty()) continue;
    set.query_ids.push_back(absl::StrCat("q", i + 1));
    set.queries.push_back(std::move(anchor_texts[i]));
    set.relevant.push_back(std::move(relevant[i]));
  }
  if (set.queries.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no anchor with a positive (every row is labelled 0)"));
  }
  for (size_t i = 0; i < set.corpus.size(); ++i) set.corpus_ids.push_back(absl::StrCat("d", i + 1));
  return set;
}

RetrievalData TokenizeRetrieval(RetrievalSet set, const Tokenizer& tokenizer, int64_t max_len,
                                const std::string& source) {
  RetrievalData d;
  d.queries.reserve(set.queries.size());
  for (const std::string& text : set.queries) d.queries.push_back(tokenizer.Encode(text, max_len));
  d.corpus.reserve(set.corpus.size());
  for (const std::string& text : set.corpus) d.corpus.push_back(tokenizer.Encode(text, max_len));
  d.set = std::move(set);
  d.pad_id = tokenizer.pad_id();
  d.source = source;
  return d;
}

}  // namespace trainer
}  // namespace tunefleet
