// Values echoed in error messages, clipped: a 5 MB value must not make a 5 MB error line.
//
//   return absl::InvalidArgumentError(absl::StrCat("got '", ClipValue(text), "'"));
//   // got 'aaaa...aaaa... (5242880 bytes)'
//
// Thread-safety: stateless.
#ifndef TUNEFLEET_COMMON_CLIP_H_
#define TUNEFLEET_COMMON_CLIP_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace tunefleet {

// How many bytes of a value error messages echo.
inline constexpr size_t kClipBytes = 200;

// `value` unchanged when it has at most `max_bytes` bytes; else its first `max_bytes` bytes
// (never cutting a UTF-8 character in two), "...", and the original length:
// "abc... (5242880 bytes)".
std::string ClipValue(std::string_view value, size_t max_bytes = kClipBytes);

// A path echoed in an error: clipped only past PATH_MAX (4096 bytes), since no longer path names
// a file, and a shorter one is worth reading whole (its last part is the file's name).
inline constexpr size_t kClipPathBytes = 4096;
inline std::string ClipPath(std::string_view path) { return ClipValue(path, kClipPathBytes); }

// Text from a file (a journal's fields) made safe to print on a terminal: control characters
// (C0 but newline and tab, DEL, and C1 as UTF-8 encodes them, U+0080-U+009F, e.g. CSI) become
// visible escapes ("\x1b", "\u009b"), so that no escape sequence in the file reaches the terminal.
std::string Printable(std::string_view text);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CLIP_H_
