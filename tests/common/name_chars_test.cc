#include "common/name_chars.h"

#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

struct Case {
  std::string text;
  std::string extra;
  bool want;
};

TEST(AllAlnumOrTest, AcceptsLettersDigitsAndOnlyTheGivenExtras) {
  const Case cases[] = {
      {"", "", true},  // length is the caller's check
      {"AZaz09", "", true},
      {"run-1.b_2", "-_.", true},
      {"run-1", "_", false},  // '-' not allowed here
      {"a b", "-_.", false},
      {"[::1]:5555", "-._:@[]", true},
      {std::string("a\0b", 3), "-", false},  // a NUL is never an extra
      {"caf\xc3\xa9", "-", false},           // non-ASCII bytes
  };
  for (const Case& c : cases) {
    EXPECT_EQ(AllAlnumOr(c.text, c.extra), c.want)
        << "'" << c.text << "' with extras '" << c.extra << "'";
  }
}

}  // namespace
}  // namespace tunefleet
