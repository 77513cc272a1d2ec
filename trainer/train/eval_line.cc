#include "trainer/train/eval_line.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tunefleet {
namespace trainer {
namespace {

bool Headline(const std::string& key, const std::string& primary) {
  static const auto* const kShown = new std::set<std::string>{
      "eval/spearman", "eval/pearson",  "eval/accuracy",  "eval/loss",   "eval/ndcg@10",
      "eval/mrr@10",   "eval/recall@1", "eval/recall@10", "eval/map@100"};
  return key == primary || absl::StartsWith(key, primary + "@") || kShown->count(key) > 0;
}

}  // namespace

std::string EvalLine(int64_t step, int64_t samples, const std::map<std::string, double>& metrics,
                     const std::string& primary, double seconds) {
  std::string line = absl::StrFormat("eval step %d at %d samples:", step, samples);
  size_t shown = 0;
  for (const auto& [key, value] : metrics) {
    if (!Headline(key, primary)) continue;
    absl::StrAppendFormat(&line, "  %s %.5g", key, value);
    ++shown;
  }
  if (shown < metrics.size()) {
    absl::StrAppendFormat(&line, "  (%.2f s; all %d metrics in metrics.jsonl)", seconds,
                          metrics.size());
  } else {
    absl::StrAppendFormat(&line, "  (%.2f s)", seconds);
  }
  return line;
}

}  // namespace trainer
}  // namespace tunefleet
