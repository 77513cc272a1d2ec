// A block of lines redrawn in place on a terminal (the sweep's live progress table): each Draw
// moves the cursor up over the block drawn before, clears to the end of the screen and writes
// the new one to stdout.
//
// Thread-safety: one thread (the one that writes stdout).
#ifndef TUNEFLEET_HPO_REPORT_LIVE_BLOCK_H_
#define TUNEFLEET_HPO_REPORT_LIVE_BLOCK_H_

#include <string>

#include "absl/time/time.h"

namespace tunefleet {
namespace hpo {

class LiveBlock {
 public:
  // Whether to redraw at `now`: always when `force`, else at most every 250 ms.
  bool Due(bool force, absl::Time now);
  // Replaces the block last drawn with `block` (lines ending in '\n').
  void Draw(const std::string& block);
  // Writes `lines` where the block was (the block goes; the next Draw puts it below them).
  void Above(const std::string& lines);
  // The rows of the terminal on stdout; 24 when unknown or fewer than 9.
  static int TerminalRows();

 private:
  absl::Time last_shown_ = absl::InfinitePast();
  int shown_lines_ = 0;
};

}  // namespace hpo
}  // namespace tunefleet

#endif  // TUNEFLEET_HPO_REPORT_LIVE_BLOCK_H_
