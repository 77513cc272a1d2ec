// UTF-8 validation and repair of the text the trainer reads (dataset files, `trainer encode`'s
// input, `trainer tokenize`'s stdin), and the one warning line an input with invalid UTF-8 gets.
//
// The rule: well-formed UTF-8 is that of the Unicode Standard (chapter 3, table 3-7): no
// overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF. Each maximal
// ill-formed subsequence (Unicode's "maximal subpart": the longest start of a well-formed
// sequence there, else one byte) becomes one U+FFFD. That is what Python's
// bytes.decode("utf-8", errors="replace") gives (and the WHATWG encoding standard and ICU's
// U8_NEXT, which the WordPiece tokenizer decodes with), e.g.
//   "E2 82 41" -> U+FFFD 'A'       (a truncated 3-byte sequence: one U+FFFD)
//   "C0 80"    -> U+FFFD U+FFFD    (overlong: C0 can start nothing)
//   "ED A0 80" -> 3 x U+FFFD       (a surrogate: ED then A0 is not well-formed)
// ASCII bytes (so '\t', '\n', '\r') are never part of an ill-formed subsequence, so splitting
// on them before or after the repair gives the same fields. Well-formed text is left exactly as
// it is. BertNormalizer drops U+FFFD, so the tokens of a repaired text are those the tokenizer
// gave the raw bytes (it decodes an ill-formed subsequence as U+FFFD and drops it).
// Thread-safety: free functions are pure; a Utf8LineChecker belongs to one thread.
#ifndef TUNEFLEET_TRAINER_DATA_UTF8_CHECK_H_
#define TUNEFLEET_TRAINER_DATA_UTF8_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace tunefleet {
namespace trainer {

// The byte length of the UTF-8 sequence whose first byte is `lead` (1 to 4, by the lead byte
// alone; callers clip it to the text left, so ill-formed text cannot overrun).
inline size_t Utf8SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// The number of maximal ill-formed subsequences in `text`: 0 when it is well-formed UTF-8.
int64_t CountInvalidUtf8(absl::string_view text);
inline bool IsValidUtf8(absl::string_view text) { return CountInvalidUtf8(text) == 0; }

// `text` with each maximal ill-formed subsequence replaced by U+FFFD (EF BF BD); a well-formed
// text comes back unchanged. `replaced`, when given, gets the number of replacements.
std::string ReplaceInvalidUtf8(absl::string_view text, int64_t* replaced = nullptr);

// Checks the lines of one input (a file, or stdin) as they are read, repairs the ill-formed
// ones in place, and gives the input's one warning line:
//   trainer: warning: SOURCE:LINE: invalid UTF-8 (N lines; each bad byte sequence read as
//   U+FFFD, which the tokenizer drops)
// LINE is the first line (1-based) that held invalid UTF-8, N how many lines did (all one line).
//
//   Utf8LineChecker utf8(path);
//   for (int64_t n = 1; std::getline(in, line); ++n) utf8.Check(n, &line);
//   utf8.Report(&std::cerr);   // nothing when every line was well-formed
class Utf8LineChecker {
 public:
  explicit Utf8LineChecker(std::string source) : source_(std::move(source)) {}

  // Replaces each ill-formed subsequence of *line by U+FFFD and counts the line when it had
  // one; `number` is the line's 1-based number in the input. Returns true when the line was
  // well-formed (and is untouched).
  bool Check(int64_t number, std::string* line);

  int64_t bad_lines() const { return bad_lines_; }
  int64_t first_bad_line() const { return first_bad_line_; }  // 0 when none
  int64_t replaced() const { return replaced_; }              // U+FFFD put in, over all lines

  // The warning line above without a newline; empty when every line was well-formed.
  std::string Warning() const;
  // Writes Warning() and '\n' to *out in one write when some line was ill-formed and out is not
  // null; otherwise nothing.
  void Report(std::ostream* out) const;

 private:
  std::string source_;
  int64_t bad_lines_ = 0;
  int64_t first_bad_line_ = 0;
  int64_t replaced_ = 0;
};

}  // namespace trainer
}  // namespace tunefleet

#endif  // TUNEFLEET_TRAINER_DATA_UTF8_CHECK_H_
