// trainer/data/utf8_check.h: well-formed text (multi-byte, the boundary code points) is left as it
// is; truncated sequences, overlong forms, surrogates, code points above U+10FFFF and stray
// continuation bytes become one U+FFFD per maximal ill-formed subsequence, exactly as Python's
// bytes.decode("utf-8", errors="replace") gives them (the expectations below are its output) and
// as ICU's U8_NEXT (the tokenizer's decoder) reads them, so the tokens of a repaired text are
// those of the raw bytes; the line checker's one warning.
#include "trainer/data/utf8_check.h"

#include <unicode/utf8.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

#define REPL "\xEF\xBF\xBD"  // U+FFFD in UTF-8

TEST(Utf8CheckTest, WellFormedTextIsUnchanged) {
  const std::string cases[] = {
      "",
      "plain ASCII, tabs\tand\r\n newlines",
      std::string("a\0b", 3),                   // U+0000 is well-formed
      "H\xC3\xA9llo W\xC3\x96RLD",              // 2 bytes
      "\xE4\xB8\xAD\xE6\x96\x87 \xE2\x82\xAC",  // 3 bytes: CJK, euro sign
      "\xF0\x9F\x98\x80 \xF0\xA0\x80\x80",      // 4 bytes: emoji, CJK extension B
      "\xC2\x80\xDF\xBF",                       // U+0080, U+07FF
      "\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80",   // U+0800, U+D7FF, U+E000
      REPL "\xEF\xBF\xBE\xEF\xBF\xBF",          // U+FFFD, U+FFFE, U+FFFF
      "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF",       // U+10000, U+10FFFF
      "\xEF\xBB\xBF"
      "bom",  // a BOM is a character like any other
  };
  for (const std::string& text : cases) {
    EXPECT_EQ(CountInvalidUtf8(text), 0) << text;
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    int64_t replaced = -1;
    EXPECT_EQ(ReplaceInvalidUtf8(text, &replaced), text);
    EXPECT_EQ(replaced, 0);
  }
}

struct BadCase {
  const char* what;
  std::string in;
  int64_t count;
  std::string out;
};

const std::vector<BadCase>& BadCases() {
  static const auto* cases = new std::vector<BadCase>{
      // Truncated sequences: the start of a well-formed one is one U+FFFD, however long.
      {"truncated 2-byte at end", "\xC3", 1, REPL},
      {"truncated 2-byte after text", "a\xC3", 1, "a" REPL},
      {"truncated 3-byte", "\xE2\x82", 1, REPL},
      {"truncated 3-byte before ASCII",
       "\xE2\x82"
       "a",
       1, REPL "a"},
      {"truncated 4-byte", "\xF0\x9F\x98", 1, REPL},
      {"truncated 4-byte before space", "\xF0\x9F\x98 x", 1, REPL " x"},
      {"truncated before a full one", "\xC3\xC3\xA9", 1, REPL "\xC3\xA9"},
      {"truncated 3-byte before euro", "\xE2\x82\xE2\x82\xAC", 1, REPL "\xE2\x82\xAC"},
      {"tab inside truncations", "\xF1\x80\x80\t\xF1\x80", 2, REPL "\t" REPL},
      {"Latin-1 e-acute", "caf\xE9 au lait", 1, "caf" REPL " au lait"},
      {"Latin-1 at end", "caf\xE9", 1, "caf" REPL},
      // Overlong forms: every byte.
      {"overlong NUL", "\xC0\x80", 2, REPL REPL},
      {"overlong C1", "\xC1\xBF", 2, REPL REPL},
      {"overlong 3-byte", "\xE0\x80\x80", 3, REPL REPL REPL},
      {"overlong 3-byte max", "\xE0\x9F\xBF", 3, REPL REPL REPL},
      {"overlong 4-byte", "\xF0\x80\x80\x80", 4, REPL REPL REPL REPL},
      {"overlong 4-byte max", "\xF0\x8F\xBF\xBF", 4, REPL REPL REPL REPL},
      // Surrogates (CESU-8 included): every byte.
      {"high surrogate", "\xED\xA0\x80", 3, REPL REPL REPL},
      {"low surrogate", "\xED\xBF\xBF", 3, REPL REPL REPL},
      {"CESU-8 pair", "\xED\xA0\xBD\xED\xB8\x80", 6, REPL REPL REPL REPL REPL REPL},
      // Above U+10FFFF, and bytes that start nothing.
      {"U+110000", "\xF4\x90\x80\x80", 4, REPL REPL REPL REPL},
      {"F5 lead", "\xF5\x80\x80\x80", 4, REPL REPL REPL REPL},
      {"FF", "\xFF", 1, REPL},
      {"FE", "\xFE", 1, REPL},
      // Stray continuation bytes: each one.
      {"lone continuation", "\x80", 1, REPL},
      {"continuation between ASCII",
       "a\x80"
       "b",
       1, "a" REPL "b"},
      {"two continuations", "\x80\xBF", 2, REPL REPL},
      {"one too many", "\xC3\xA9\xA9", 1, "\xC3\xA9" REPL},
  };
  return *cases;
}

TEST(Utf8CheckTest, IllFormedSequencesAsPythonReplaces) {
  for (const BadCase& c : BadCases()) {
    EXPECT_EQ(CountInvalidUtf8(c.in), c.count) << c.what;
    EXPECT_FALSE(IsValidUtf8(c.in)) << c.what;
    int64_t replaced = -1;
    const std::string out = ReplaceInvalidUtf8(c.in, &replaced);
    EXPECT_EQ(out, c.out) << c.what;
    EXPECT_EQ(replaced, c.count) << c.what;
    EXPECT_TRUE(IsValidUtf8(out)) << c.what;
    EXPECT_EQ(ReplaceInvalidUtf8(out), out) << c.what;  // idempotent
  }
}

// ICU's reading: U8_NEXT, an ill-formed subsequence as U+FFFD, re-encoded.
std::string IcuReplace(const std::string& text, int64_t* bad) {
  std::string out;
  *bad = 0;
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const int32_t n = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < n;) {
    UChar32 c;
    U8_NEXT(s, i, n, c);
    if (c < 0) {
      ++*bad;
      c = 0xFFFD;
    }
    char buf[4];
    int32_t len = 0;
    U8_APPEND_UNSAFE(buf, len, c);
    out.append(buf, len);
  }
  return out;
}

// Random byte strings, mostly from bytes that make interesting sequences.
std::vector<std::string> RandomTexts() {
  static const unsigned char kBytes[] = {'a',  ' ',  '\t', 0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F,
                                         0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xC3, 0xDF, 0xE0, 0xE2,
                                         0xED, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF, 0xE4, 0xB8};
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  for (int t = 0; t < 20000; ++t) {
    std::string text(rng() % 12, '\0');
    for (char& c : text) {
      c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : kBytes[rng() % sizeof(kBytes)]);
    }
    texts.push_back(std::move(text));
  }
  return texts;
}

TEST(Utf8CheckTest, SameAsIcuOnRandomBytes) {
  int64_t ill_formed = 0;
  for (const std::string& text : RandomTexts()) {
    int64_t icu_bad = 0;
    const std::string want = IcuReplace(text, &icu_bad);
    ASSERT_EQ(ReplaceInvalidUtf8(text), want) << testing::PrintToString(text);
    ASSERT_EQ(CountInvalidUtf8(text), icu_bad) << testing::PrintToString(text);
    ill_formed += icu_bad > 0;
  }
  EXPECT_GT(ill_formed, 10000);  // the generator does make ill-formed text
}

// What the repair changes nothing in: the tokenizer's normalisation and ids.
TEST(Utf8CheckTest, RepairedTextTokenizesAsTheRawBytes) {
  auto bert = WordPieceTokenizer::FromVocabFile("data/bert-uncased-vocab/vocab.txt");
  ASSERT_TRUE(bert.ok()) << bert.status();
  std::vector<std::string> texts = RandomTexts();
  texts.resize(3000);
  for (const BadCase& c : BadCases()) texts.push_back(c.in);
  texts.push_back(
      "Caf\xE9 [SEP] na\xEFve \xE2\x82"
      "100 r\xC3\xA9sum\xC3\xA9!");
  for (const std::string& raw : texts) {
    const std::string repaired = ReplaceInvalidUtf8(raw);
    ASSERT_EQ(WordPieceTokenizer::Normalize(repaired), WordPieceTokenizer::Normalize(raw))
        << testing::PrintToString(raw);
    ASSERT_EQ(bert->Tokenize(repaired), bert->Tokenize(raw)) << testing::PrintToString(raw);
  }
  // The bytes vanish: "caf\xE9 au lait" tokenizes as "caf au lait".
  EXPECT_EQ(bert->Tokenize(ReplaceInvalidUtf8("caf\xE9 au lait")), bert->Tokenize("caf au lait"));
}

TEST(Utf8CheckTest, LineCheckerWarnsOnceNamingTheFirstLine) {
  Utf8LineChecker checker("data/x.tsv");
  std::vector<std::string> lines = {"fine", "caf\xE9", "\xC3\xA9t\xC3\xA9", "\xFF\xFE",
                                    "",     "ok",      "\xED\xA0\x80"};
  std::vector<bool> valid;
  for (size_t i = 0; i < lines.size(); ++i) valid.push_back(checker.Check(i + 1, &lines[i]));
  EXPECT_THAT(valid, ::testing::ElementsAre(true, false, true, false, true, true, false));
  EXPECT_THAT(lines, ::testing::ElementsAre("fine", "caf" REPL, "\xC3\xA9t\xC3\xA9", REPL REPL, "",
                                            "ok", REPL REPL REPL));
  EXPECT_EQ(checker.bad_lines(), 3);
  EXPECT_EQ(checker.first_bad_line(), 2);
  EXPECT_EQ(checker.replaced(), 6);
  const std::string want =
      "trainer: warning: data/x.tsv:2: invalid UTF-8 (3 lines; each bad byte sequence read as "
      "U+FFFD, which the tokenizer drops)";
  EXPECT_EQ(checker.Warning(), want);
  std::ostringstream out;
  checker.Report(&out);
  EXPECT_EQ(out.str(), want + "\n");
  checker.Report(nullptr);  // nowhere: no crash

  Utf8LineChecker one("stdin");
  std::string line = "ok";
  EXPECT_TRUE(one.Check(1, &line));
  line = "\x80";
  EXPECT_FALSE(one.Check(2, &line));
  EXPECT_EQ(one.Warning(),
            "trainer: warning: stdin:2: invalid UTF-8 (1 line; each bad byte sequence read as "
            "U+FFFD, which the tokenizer drops)");
}

TEST(Utf8CheckTest, LineCheckerSilentOnValidInput) {
  Utf8LineChecker checker("good.txt");
  std::string lines[] = {"a", "H\xC3\xA9llo", "\xF0\x9F\x98\x80", ""};
  for (int i = 0; i < 4; ++i) {
    const std::string before = lines[i];
    EXPECT_TRUE(checker.Check(i + 1, &lines[i]));
    EXPECT_EQ(lines[i], before);
  }
  EXPECT_EQ(checker.bad_lines(), 0);
  EXPECT_EQ(checker.first_bad_line(), 0);
  EXPECT_EQ(checker.Warning(), "");
  std::ostringstream out;
  checker.Report(&out);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
