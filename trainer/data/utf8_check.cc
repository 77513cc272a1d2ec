#include "trainer/data/utf8_check.h"

#include <ostream>

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// At s[0], with n > 0 bytes left: the length of the well-formed character there (> 0), or
// minus the length of the maximal ill-formed subsequence there (< 0).
int Next(const unsigned char* s, size_t n) {
  const unsigned char b = s[0];
  if (b < 0x80) return 1;
  int length;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte (Unicode table 3-7)
  if (b >= 0xC2 && b <= 0xDF) {
    length = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    length = 3;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    length = 4;
    if (b == 0xF0) lo = 0x90;  // no overlong forms
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;  // a continuation byte, C0, C1 or F5..FF: never starts a character
  }
  for (int i = 1; i < length; ++i) {
    if (static_cast<size_t>(i) >= n) return -i;  // truncated by the end
    const unsigned char c = s[i];
    if (i == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return -i;
  }
  return length;
}

// Calls on_valid(offset, length) for each well-formed run and on_invalid() for each maximal
// ill-formed subsequence, in order.
template <typename Valid, typename Invalid>
void Scan(absl::string_view text, Valid on_valid, Invalid on_invalid) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t run = 0;  // start of the current well-formed run
  for (size_t i = 0; i < n;) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const int step = Next(s + i, n - i);
    if (step > 0) {
      i += static_cast<size_t>(step);
      continue;
    }
    if (i > run) on_valid(run, i - run);
    on_invalid();
    i += static_cast<size_t>(-step);
    run = i;
  }
  if (n > run) on_valid(run, n - run);
}

}  // namespace

int64_t CountInvalidUtf8(absl::string_view text) {
  int64_t count = 0;
  Scan(
      text, [](size_t, size_t) {}, [&count] { ++count; });
  return count;
}

std::string ReplaceInvalidUtf8(absl::string_view text, int64_t* replaced) {
  std::string out;
  int64_t count = 0;
  Scan(
      text, [&](size_t offset, size_t length) { out.append(text.data() + offset, length); },
      [&] {
        out.append(kReplacement);
        ++count;
      });
  if (replaced != nullptr) *replaced = count;
  return out;
}

bool Utf8LineChecker::Check(int64_t number, std::string* line) {
  const int64_t bad = CountInvalidUtf8(*line);
  if (bad == 0) return true;
  *line = ReplaceInvalidUtf8(*line);
  replaced_ += bad;
  if (bad_lines_++ == 0) first_bad_line_ = number;
  return false;
}

std::string Utf8LineChecker::Warning() const {
  if (bad_lines_ == 0) return "";
  return absl::StrCat("trainer: warning: ", source_, ":", first_bad_line_, ": invalid UTF-8 (",
                      bad_lines_, bad_lines_ == 1 ? " line" : " lines",
                      "; each bad byte sequence read as U+FFFD, which the tokenizer drops)");
}

void Utf8LineChecker::Report(std::ostream* out) const {
  if (out == nullptr || bad_lines_ == 0) return;
  *out << (Warning() + "\n");
  out->flush();
}

}  // namespace trainer
}  // namespace tunefleet
