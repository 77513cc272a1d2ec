// Words quoted for /bin/sh, for the command lines tunefleet prints or hands to a remote shell:
// a word of safe characters stays as it is, any other is single-quoted ('it'\''s').
// Thread-safety: pure functions.
#ifndef TUNEFLEET_COMMON_SHELL_QUOTE_H_
#define TUNEFLEET_COMMON_SHELL_QUOTE_H_

#include <string>

namespace tunefleet {

// `word` quoted for /bin/sh when it needs it.
std::string ShellQuote(const std::string& word);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_SHELL_QUOTE_H_
