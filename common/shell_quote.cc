#include "common/shell_quote.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace tunefleet {

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789@%+=:,./_-") == std::string::npos) {
    return word;
  }
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

}  // namespace tunefleet
