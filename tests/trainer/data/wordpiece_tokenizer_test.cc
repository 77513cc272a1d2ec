// The WordPiece tokenizer against Hugging Face tokenizers: every line of the golden file
// (data/golden/tokens_sts_dev.jsonl: edge cases, then both columns of sts-dev.csv), pair
// encoding and longest-first truncation worked out by hand from HF's algorithm, padding, and
// bad vocab files.
#include "trainer/data/wordpiece_tokenizer.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kVocab[] = "data/bert-uncased-vocab/vocab.txt";
constexpr char kGolden[] = "data/golden/tokens_sts_dev.jsonl";

const WordPieceTokenizer& Bert() {
  static const WordPieceTokenizer* const t = [] {
    auto loaded = WordPieceTokenizer::FromVocabFile(kVocab);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return new WordPieceTokenizer(std::move(loaded).value());
  }();
  return *t;
}

std::vector<int32_t> Ids(absl::string_view text) { return Bert().Encode(text).ids; }

int32_t Id(const std::string& token) {
  int32_t id = Bert().TokenId(token);
  EXPECT_GE(id, 0) << token;
  return id;
}

TEST(WordPieceTokenizerTest, VocabSpecialIds) {
  const WordPieceTokenizer& t = Bert();
  EXPECT_EQ(t.vocab_size(), 30522);
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 100);
  EXPECT_EQ(t.cls_id(), 101);
  EXPECT_EQ(t.sep_id(), 102);
  EXPECT_EQ(t.TokenId("[MASK]"), 103);
  EXPECT_EQ(t.TokenId("no-such-token"), -1);
}

// Every golden line, exactly; the failure message lists the lines that differ.
TEST(WordPieceTokenizerTest, ReproducesGoldenFileExactly) {
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << kGolden;
  std::string line;
  int lines = 0, matched = 0;
  std::vector<std::string> diffs;
  while (std::getline(in, line)) {
    ++lines;
    nlohmann::json j = nlohmann::json::parse(line);
    const std::string text = j.at("text").get<std::string>();
    const std::vector<int32_t> want = j.at("ids").get<std::vector<int32_t>>();
    const std::vector<int32_t> got = Ids(text);
    if (got == want) {
      ++matched;
    } else if (diffs.size() < 10) {
      diffs.push_back(absl::StrCat("line ", lines, " ", j.at("text").dump(), ": want [",
                                   absl::StrJoin(want, ", "), "] got [", absl::StrJoin(got, ", "),
                                   "]"));
    }
  }
  EXPECT_EQ(lines, 3015);
  EXPECT_EQ(matched, lines) << absl::StrJoin(diffs, "\n");
  std::cout << "golden: " << matched << " / " << lines << " lines identical\n";
}

TEST(WordPieceTokenizerTest, NormalizerSteps) {
  // Accents stripped after NFD, Unicode lowercase, controls and zero-width format chars dropped,
  // every kind of whitespace one space, CJK ideographs spaced, no context for the final sigma.
  EXPECT_EQ(WordPieceTokenizer::Normalize("Héllo WÖRLD"), "hello world");
  EXPECT_EQ(WordPieceTokenizer::Normalize("a\tb\nc\rd\xC2\xA0"
                                          "e\xE3\x80\x80"
                                          "f"),
            "a b c d e f");
  EXPECT_EQ(WordPieceTokenizer::Normalize("a\x01"
                                          "b\x7F"
                                          "c\xE2\x80\x8B"
                                          "d\xEF\xBF\xBD"
                                          "e"),
            "abcde");
  EXPECT_EQ(WordPieceTokenizer::Normalize("\xE4\xB8\xAD\xE6\x96\x87"), " 中  文 ");
  EXPECT_EQ(WordPieceTokenizer::Normalize("ΟΔΟΣ"), "οδοσ");
  EXPECT_EQ(WordPieceTokenizer::Normalize("İ"), "i");  // NFD: I + U+0307 (Mn), dropped
  EXPECT_EQ(WordPieceTokenizer::Normalize("\xFF"
                                          "a"),
            "a");  // invalid UTF-8 reads as U+FFFD
}

TEST(WordPieceTokenizerTest, WordPieceGreedyLongestMatch) {
  // "unaffable" is the classic example: un ##aff ##able.
  EXPECT_EQ(Bert().Tokenize("unaffable"),
            (std::vector<int32_t>{Id("una"), Id("##ffa"), Id("##ble")}));
  // A word of 101 characters is [UNK] as a whole; 100 is tokenized.
  EXPECT_EQ(Bert().Tokenize(std::string(101, 'a')), std::vector<int32_t>{100});
  EXPECT_NE(Bert().Tokenize(std::string(100, 'a')), std::vector<int32_t>{100});
  // One unmatchable piece makes the whole word [UNK], not just the piece.
  EXPECT_EQ(Bert().Tokenize("hello\xE2\x98\x83world"), (std::vector<int32_t>{100}));
  // Special tokens are matched in the raw text (case-sensitive), anywhere.
  EXPECT_EQ(Bert().Tokenize("a[SEP]b"), (std::vector<int32_t>{Id("a"), 102, Id("b")}));
  EXPECT_EQ(Bert().Tokenize("[MASK]"), (std::vector<int32_t>{103}));
  EXPECT_EQ(Bert().Tokenize("[sep]"), (std::vector<int32_t>{Id("["), Id("sep"), Id("]")}));
}

TEST(WordPieceTokenizerTest, SingleTruncationKeepsSep) {
  // "a b c d e" is five tokens; max_len 5 keeps three of them.
  const int32_t a = Id("a"), b = Id("b"), c = Id("c"), d = Id("d"), e = Id("e");
  EXPECT_THAT(Bert().Encode("a b c d e", 5).ids, ElementsAre(101, a, b, c, 102));
  EXPECT_THAT(Bert().Encode("a b c d e", 7).ids, ElementsAre(101, a, b, c, d, e, 102));
  EXPECT_THAT(Bert().Encode("a b c d e", 2).ids, ElementsAre(101, 102));
  EXPECT_THAT(Bert().Encode("a b c d e", 0).ids, ElementsAre(101, a, b, c, d, e, 102));
  EXPECT_THAT(Bert().Encode("a b c d e", 5).token_type_ids, ElementsAre(0, 0, 0, 0, 0));
  // 300 words: 128 ids by default, ending in [SEP].
  std::string long_text;
  for (int i = 0; i < 300; ++i) long_text += "word ";
  Encoding enc = Bert().Encode(long_text);
  ASSERT_EQ(enc.ids.size(), 128u);
  EXPECT_EQ(enc.ids.front(), 101);
  EXPECT_EQ(enc.ids.back(), 102);
}

TEST(WordPieceTokenizerTest, PairLayoutAndTypeIds) {
  Encoding e = Bert().EncodePair("Hello, world!", "Bye.");
  EXPECT_THAT(e.ids, ElementsAre(101, 7592, 1010, 2088, 999, 102, Id("bye"), Id("."), 102));
  EXPECT_THAT(e.token_type_ids, ElementsAre(0, 0, 0, 0, 0, 0, 1, 1, 1));
  Encoding empty = Bert().EncodePair("", "");
  EXPECT_THAT(empty.ids, ElementsAre(101, 102, 102));
  EXPECT_THAT(empty.token_type_ids, ElementsAre(0, 0, 1));
}

// Worked by hand from tokenizers' truncate_encodings (LongestFirst), budget L = max_len - 3.
TEST(WordPieceTokenizerTest, PairTruncationLongestFirst) {
  const int32_t a = Id("a"), b = Id("b"), c = Id("c"), d = Id("d"), e = Id("e"), f = Id("f"),
                x = Id("x"), y = Id("y");
  // Fits: nothing cut (L = 7, 5 + 2).
  EXPECT_THAT(Bert().EncodePair("a b c d e", "x y", 10).ids,
              ElementsAre(101, a, b, c, d, e, 102, x, y, 102));
  // Only the longer is cut: L = 5, shorter 2 kept, longer keeps 3.
  EXPECT_THAT(Bert().EncodePair("a b c d e", "x y", 8).ids,
              ElementsAre(101, a, b, c, 102, x, y, 102));
  EXPECT_THAT(Bert().EncodePair("x y", "a b c d e", 8).ids,
              ElementsAre(101, x, y, 102, a, b, c, 102));
  // Both cut: L = 5, lengths 7 and 3 -> shorter 5/2 = 2, longer 3.
  EXPECT_THAT(Bert().EncodePair("a b c d e f g", "x y z", 8).ids,
              ElementsAre(101, a, b, c, 102, x, y, 102));
  // Equal lengths, odd budget: the second gets the extra token (L = 5 -> 2 and 3). The
  // one-at-a-time rule of transformers' Python tokenizers would give 3 and 2 here.
  EXPECT_THAT(Bert().EncodePair("a b c d", "d e f g", 8).ids,
              ElementsAre(101, a, b, 102, d, e, f, 102));
  // Equal lengths, even budget: L = 4 -> 2 and 2.
  EXPECT_THAT(Bert().EncodePair("a b c d", "d e f g", 7).ids,
              ElementsAre(101, a, b, 102, d, e, 102));
  // Minimum pair budget: only the special tokens.
  Encoding tiny = Bert().EncodePair("a b", "c d", 3);
  EXPECT_THAT(tiny.ids, ElementsAre(101, 102, 102));
  EXPECT_THAT(tiny.token_type_ids, ElementsAre(0, 0, 1));
}

TEST(WordPieceTokenizerTest, PadBatchDynamic) {
  std::vector<Encoding> batch = {Bert().Encode("a b c"), Bert().Encode(""),
                                 Bert().EncodePair("a", "b")};
  PaddedBatch p = PadBatch(batch);
  EXPECT_EQ(p.rows, 3);
  EXPECT_EQ(p.cols, 5);
  const int64_t a = Id("a"), b = Id("b"), c = Id("c");
  EXPECT_THAT(p.input_ids, ElementsAre(101, a, b, c, 102,  //
                                       101, 102, 0, 0, 0,  //
                                       101, a, 102, b, 102));
  EXPECT_THAT(p.token_type_ids, ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1));
  EXPECT_THAT(p.attention_mask, ElementsAre(1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1));
  PaddedBatch none = PadBatch({});
  EXPECT_EQ(none.rows, 0);
  EXPECT_EQ(none.cols, 0);
  EXPECT_TRUE(none.input_ids.empty());
}

std::string WriteVocab(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The error that loading the vocab at `path` gives, which must be one line ("" and a failed
// expectation when it loads).
std::string VocabError(const std::string& path) {
  auto t = WordPieceTokenizer::FromVocabFile(path);
  EXPECT_FALSE(t.ok()) << path;
  const std::string message(t.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(WordPieceTokenizerTest, BadVocabFilesNameTheFile) {
  EXPECT_THAT(VocabError("/nonexistent/vocab.txt"), HasSubstr("/nonexistent/vocab.txt"));
  const std::string empty = WriteVocab("empty.txt", "");
  EXPECT_EQ(VocabError(empty), empty + ": vocab is empty");
  const std::string no_cls = WriteVocab("no_cls.txt", "[PAD]\n[UNK]\n[SEP]\nhello\n");
  EXPECT_THAT(VocabError(no_cls), HasSubstr(no_cls + ": vocab lacks the special token(s) [CLS] ("));
  EXPECT_THAT(VocabError(WriteVocab("none.txt", "hello\nworld\n")),
              HasSubstr("[CLS], [SEP], [UNK], [PAD]"));
  const std::string bad_utf8 = WriteVocab("bad_utf8.txt", "[PAD]\n[UNK]\n\xC3\x28\n");
  EXPECT_EQ(VocabError(bad_utf8), bad_utf8 + ":3: vocab line is not valid UTF-8");
}

TEST(WordPieceTokenizerTest, SmallVocabReadsLikeHf) {
  // CRLF and trailing spaces trimmed; a repeated token takes its last id; no [MASK] needed.
  const std::string path =
      WriteVocab("small.txt", "[PAD]\r\n[UNK]  \n[CLS]\n[SEP]\nhug\n##s\nhug\n");
  auto t = WordPieceTokenizer::FromVocabFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->vocab_size(), 7);
  EXPECT_EQ(t->unk_id(), 1);
  EXPECT_EQ(t->TokenId("hug"), 6);
  EXPECT_THAT(t->Encode("Hugs hug? [MASK]").ids, ElementsAre(2, 6, 5, 6, 1, 1, 1, 1, 3));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
