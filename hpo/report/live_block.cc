#include "hpo/report/live_block.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace hpo {

bool LiveBlock::Due(bool force, absl::Time now) {
  if (!force && now - last_shown_ < absl::Milliseconds(250)) return false;
  last_shown_ = now;
  return true;
}

void LiveBlock::Draw(const std::string& block) {
  std::string out;
  if (shown_lines_ > 0) out = absl::StrCat("\x1b[", shown_lines_, "F\x1b[J");
  out += block;
  shown_lines_ = static_cast<int>(std::count(block.begin(), block.end(), '\n'));
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void LiveBlock::Above(const std::string& lines) {
  std::string out;
  if (shown_lines_ > 0) out = absl::StrCat("\x1b[", shown_lines_, "F\x1b[J");
  out += lines;
  shown_lines_ = 0;
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

int LiveBlock::TerminalRows() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 8) return ws.ws_row;
  return 24;
}

}  // namespace hpo
}  // namespace tunefleet
