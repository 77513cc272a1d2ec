// `trainer tokenize` (trainer/commands/tokenize_command.h) on given streams: invalid UTF-8 on stdin
// is read as U+FFFD (the ids are those of the text without the bad bytes, as before), with one
// warning line on stderr naming the first such stdin line and how many lines had some; valid input
// (multi-byte included) gives no warning.
#include "trainer/commands/tokenize_command.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace trainer {
namespace {

constexpr char kVocab[] = "data/bert-uncased-vocab/vocab.txt";

struct Result {
  int rc;
  std::string out;
  std::string err;
};

Result Tokenize(const std::string& input, std::vector<std::string> args = {}) {
  args.insert(args.begin(), {"--vocab", kVocab});
  std::istringstream in(input);
  std::ostringstream out, err;
  const int rc = RunTokenizeOn(args, in, out, err);
  return {rc, out.str(), err.str()};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Warning(int first_line, int lines) {
  return "trainer: warning: stdin:" + std::to_string(first_line) + ": invalid UTF-8 (" +
         std::to_string(lines) + (lines == 1 ? " line" : " lines") +
         "; each bad byte sequence read as U+FFFD, which the tokenizer drops)\n";
}

TEST(TokenizeCommandTest, ValidInputGivesNoWarning) {
  const Result r = Tokenize("Hello, world!\ncaf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87\r\n\n");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "{\"ids\": [101, 7592, 1010, 2088, 999, 102]}");
  EXPECT_EQ(lines[2], "{\"ids\": [101, 102]}");
}

TEST(TokenizeCommandTest, InvalidUtf8WarnsOnceWithFirstLineAndCount) {
  const Result r =
      Tokenize("Hello, world!\ncaf\xE9 au lait\r\nfine\n\xFF\xFE\nna\xEFve [SEP] \xC0\x80ok\n");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, Warning(2, 3));
  // The ids are those of the text without the bad bytes (BertNormalizer drops U+FFFD).
  const Result clean = Tokenize("Hello, world!\ncaf au lait\nfine\n\nnave [SEP] ok\n");
  EXPECT_EQ(clean.err, "");
  EXPECT_EQ(r.out, clean.out);
  EXPECT_EQ(Lines(r.out).size(), 5u);
}

TEST(TokenizeCommandTest, PairsWithInvalidUtf8) {
  const Result r = Tokenize("a\xE9\tb\xFF\nc\td\n", {"--pair"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, Warning(1, 1));
  EXPECT_EQ(r.out, Tokenize("a\tb\nc\td\n", {"--pair"}).out);
}

TEST(TokenizeCommandTest, WarningComesBeforeAnError) {
  const Result r = Tokenize("a\xE9\tb\nno tab\n", {"--pair"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, Warning(1, 1) +
                       "trainer tokenize: error: stdin:2: --pair expects two tab-separated "
                       "sentences, got 1 field(s)\n");
  // Without bad bytes the error is the only line.
  const Result plain = Tokenize("a\tb\nno tab\n", {"--pair"});
  EXPECT_EQ(plain.rc, 2);
  EXPECT_EQ(Lines(plain.err).size(), 1u);
}

Result TokenizeWith(const std::vector<std::string>& args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int rc = RunTokenizeOn(args, in, out, err);
  return {rc, out.str(), err.str()};
}

// --model reads the folder's tokenizer through its model family: data/bert-tiny-random is a
// BERT folder with the uncased vocab, so the ids are --vocab's.
TEST(TokenizeCommandTest, ModelFolderTokenizesAsItsFamilyReadsIt) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--pair", "--max_len", "5"}}) {
    const std::string text =
        extra.empty() ? "Hello, world!\nna\xC3\xAFve caf\xC3\xA9\n" : "Hello, world!\tsecond one\n";
    std::vector<std::string> with_model = {"--model", "data/bert-tiny-random"};
    with_model.insert(with_model.end(), extra.begin(), extra.end());
    const Result r = TokenizeWith(with_model, text);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, Tokenize(text, extra).out);
    EXPECT_FALSE(r.out.empty());
  }
  EXPECT_EQ(Lines(TokenizeWith({"--model", "data/bert-tiny-random"}, "Hello, world!\n").out)[0],
            "{\"ids\": [101, 7592, 1010, 2088, 999, 102]}");
}

TEST(TokenizeCommandTest, VocabXorModelAndBadFoldersExitTwoInOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {},
           {"--vocab", kVocab, "--model", "data/bert-tiny-random"},
           {"--model", "data/bert-tiny-random", "--cased"},
           {"--model", "/nonexistent/model"}}) {
    const Result r = TokenizeWith(args, "x\n");
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_THAT(TokenizeWith({"--model", "/nonexistent/model"}, "x\n").err,
              ::testing::HasSubstr("/nonexistent/model has no tokenizer"));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
