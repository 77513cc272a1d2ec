// The character check behind the names the configs and files accept (sweep names, environment
// variable names, YAML key parts, host names): ASCII letters and digits plus a few punctuation
// characters that each kind of name allows.
//
//   AllAlnumOr("run-1.b_2", "-_.")  // true
//   AllAlnumOr("a b", "-_.")        // false: the space
//
// Thread-safety: stateless.
#ifndef TUNEFLEET_COMMON_NAME_CHARS_H_
#define TUNEFLEET_COMMON_NAME_CHARS_H_

#include <string_view>

namespace tunefleet {

// Whether every byte of `text` is an ASCII letter or digit or one of `extra`; true for "" (callers
// check length on their own, each with its own limits).
bool AllAlnumOr(std::string_view text, std::string_view extra);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_NAME_CHARS_H_
