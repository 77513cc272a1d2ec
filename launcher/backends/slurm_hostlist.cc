#include "launcher/backends/slurm_hostlist.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace launcher {
namespace {

absl::Status Bad(const std::string& list, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("host list '", list, "': ", why));
}

bool AllDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The numbers of one bracket's contents ("01-04,07"), zero-padded: {"01", "02", ...}.
absl::StatusOr<std::vector<std::string>> ExpandBracket(const std::string& list,
                                                       absl::string_view inside) {
  std::vector<std::string> out;
  for (absl::string_view item : absl::StrSplit(inside, ',')) {
    const std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    const absl::string_view lo_text = ends[0], hi_text = ends.size() > 1 ? ends[1] : ends[0];
    uint64_t lo = 0, hi = 0;
    if (!AllDigits(lo_text) || !AllDigits(hi_text) || lo_text.size() > 18 || hi_text.size() > 18 ||
        !absl::SimpleAtoi(lo_text, &lo) || !absl::SimpleAtoi(hi_text, &hi)) {
      return Bad(
          list, absl::StrCat("'[", inside, "]' holds '", item, "', not a number or a range lo-hi"));
    }
    if (hi < lo) return Bad(list, absl::StrCat("the range ", item, " runs backwards"));
    if (hi - lo >= kMaxExpandedHosts || out.size() + (hi - lo + 1) > kMaxExpandedHosts) {
      return Bad(list, absl::StrCat("more than ", kMaxExpandedHosts, " hosts"));
    }
    const int width = static_cast<int>(lo_text.size());
    for (uint64_t n = lo; n <= hi; ++n) out.push_back(absl::StrFormat("%0*d", width, n));
  }
  return out;
}

// One host pattern without top-level separators: literal text and [...] groups.
absl::Status ExpandOne(const std::string& list, absl::string_view pattern,
                       std::vector<std::string>* hosts) {
  std::vector<std::string> partial = {""};
  size_t i = 0;
  while (i < pattern.size()) {
    const size_t open = pattern.find('[', i);
    const absl::string_view literal =
        pattern.substr(i, open == absl::string_view::npos ? absl::string_view::npos : open - i);
    if (literal.find(']') != absl::string_view::npos) return Bad(list, "a ']' without its '['");
    for (std::string& p : partial) absl::StrAppend(&p, literal);
    if (open == absl::string_view::npos) break;
    const size_t close = pattern.find(']', open);
    if (close == absl::string_view::npos) return Bad(list, "a '[' without its ']'");
    const absl::string_view inside = pattern.substr(open + 1, close - open - 1);
    if (inside.find('[') != absl::string_view::npos) return Bad(list, "brackets inside brackets");
    ASSIGN_OR_RETURN(std::vector<std::string> numbers, ExpandBracket(list, inside));
    if (partial.size() * numbers.size() + hosts->size() > kMaxExpandedHosts) {
      return Bad(list, absl::StrCat("more than ", kMaxExpandedHosts, " hosts"));
    }
    std::vector<std::string> next;
    next.reserve(partial.size() * numbers.size());
    for (const std::string& p : partial) {
      for (const std::string& n : numbers) next.push_back(p + n);
    }
    partial = std::move(next);
    i = close + 1;
  }
  for (std::string& p : partial) hosts->push_back(std::move(p));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandHostList(const std::string& list) {
  std::vector<std::string> hosts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return Bad(list, "a ']' without its '['");
    const bool separator = c == ',' || absl::ascii_isspace(static_cast<unsigned char>(c));
    if (depth > 0 && i == list.size()) return Bad(list, "a '[' without its ']'");
    if (!separator || depth > 0) continue;
    if (i > start) {
      RETURN_IF_ERROR(ExpandOne(list, absl::string_view(list).substr(start, i - start), &hosts));
    }
    start = i + 1;
  }
  return hosts;
}

}  // namespace launcher
}  // namespace tunefleet
