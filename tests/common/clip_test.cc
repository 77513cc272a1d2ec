#include "common/clip.h"

#include <string>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(ClipValueTest, ShortValuesAreKept) {
  EXPECT_EQ(ClipValue(""), "");
  EXPECT_EQ(ClipValue("tcp://h:1"), "tcp://h:1");
  EXPECT_EQ(ClipValue(std::string(kClipBytes, 'a')), std::string(kClipBytes, 'a'));
}

TEST(ClipValueTest, LongValuesKeepTheirStartAndSayTheirLength) {
  const std::string huge(5 << 20, 'x');
  EXPECT_EQ(ClipValue(huge), std::string(kClipBytes, 'x') + "... (5242880 bytes)");
  EXPECT_EQ(ClipValue("abcdef", 3), "abc... (6 bytes)");
}

TEST(ClipValueTest, NeverCutsAUtf8Character) {
  // "é" is two bytes: clipping after 3 bytes of "aéé" keeps "aé", not half of the second.
  EXPECT_EQ(ClipValue("a\xc3\xa9\xc3\xa9", 4), "a\xc3\xa9... (5 bytes)");
  EXPECT_EQ(ClipValue("a\xc3\xa9\xc3\xa9", 2), "a... (5 bytes)");
}

TEST(ClipPathTest, PathsAreClippedOnlyPastPathMax) {
  const std::string long_path = "/" + std::string(300, 'd') + "/train.csv";
  EXPECT_EQ(ClipPath(long_path), long_path);
  const std::string huge(5 << 20, '/');
  EXPECT_EQ(ClipPath(huge), std::string(kClipPathBytes, '/') + "... (5242880 bytes)");
}

TEST(PrintableTest, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(Printable("\x1b]0;owned\x07\x1b[31mred"), "\\x1b]0;owned\\x07\\x1b[31mred");
  EXPECT_EQ(Printable("del\x7f nul" + std::string(1, '\0')), "del\\x7f nul\\x00");
  // C1 controls as UTF-8 encodes them (U+009B is CSI); other characters pass.
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m \xc3\xa9 \xc2\xa0"),
            "\\u009b31m \xc3\xa9 \xc2\xa0");
  EXPECT_EQ(Printable("a\tb\nc"), "a\tb\nc");
}

}  // namespace
}  // namespace tunefleet
