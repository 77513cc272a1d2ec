#include "launcher/head/head_text.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace launcher {

std::string FormatSpan(absl::Duration d) {
  if (d < absl::Seconds(1)) return absl::StrCat(absl::ToInt64Milliseconds(d), " ms");
  if (d % absl::Seconds(1) == absl::ZeroDuration()) {
    return absl::StrCat(absl::ToInt64Seconds(d), " s");
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", absl::ToDoubleSeconds(d));
  return text;
}

std::string RankRange(const std::vector<int>& ranks) {
  if (ranks.empty()) return "-";
  if (ranks.size() == 1) return std::to_string(ranks.front());
  return absl::StrCat(ranks.front(), "-", ranks.back());
}

const char* RoleName(comm::Role role) { return role == comm::AGENT ? "agent" : "client"; }

std::string OutcomeName(comm::Exit::Outcome outcome) {
  return comm::Exit::Outcome_IsValid(outcome) ? comm::Exit::Outcome_Name(outcome) : "UNKNOWN";
}

}  // namespace launcher
}  // namespace tunefleet
