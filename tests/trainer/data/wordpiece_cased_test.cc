// Cased and multilingual WordPiece against Hugging Face: every line of
// data/golden/tokens_cased.jsonl (transformers' BertTokenizerFast(do_lower_case=False), and with
// strip_accents=True, on a cased vocab with Hangul trained by data/golden/make_cased_vocab.py;
// held-out English, Korean, accented Latin, CJK, full-width, control characters, over-long
// words, pairs truncated longest-first), and a model folder's settings read from its
// tokenizer_config.json or tokenizer.json.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/data/wordpiece_tokenizer.h"

namespace tunefleet {
namespace trainer {
namespace {

using ::testing::HasSubstr;

constexpr char kCasedDir[] = "data/golden/cased-vocab";
constexpr char kGolden[] = "data/golden/tokens_cased.jsonl";

WordPieceOptions Cased() {
  WordPieceOptions options;
  options.lowercase = false;
  return options;
}

WordPieceTokenizer Load(const WordPieceOptions& options) {
  auto t = WordPieceTokenizer::FromVocabFile(JoinPath(kCasedDir, "vocab.txt"), options);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

TEST(WordPieceCasedTest, SpecialIdsComeFromTheVocab) {
  const WordPieceTokenizer t = Load(Cased());
  EXPECT_EQ(t.pad_id(), 0);
  EXPECT_EQ(t.unk_id(), 1);
  EXPECT_EQ(t.cls_id(), 2);  // not BERT's 101
  EXPECT_EQ(t.sep_id(), 3);  // not 102
  EXPECT_EQ(t.vocab_size(), 8000);
}

TEST(WordPieceCasedTest, ReproducesGoldenFileExactly) {
  WordPieceOptions strip;
  strip.lowercase = false;
  strip.strip_accents = true;
  const WordPieceTokenizer cased = Load(Cased());
  const WordPieceTokenizer stripped = Load(strip);
  std::ifstream in(kGolden);
  ASSERT_TRUE(in) << kGolden;
  std::string line;
  int lines = 0, matched = 0, pairs = 0;
  std::vector<std::string> diffs;
  while (std::getline(in, line)) {
    ++lines;
    const nlohmann::json j = nlohmann::json::parse(line);
    const std::string variant = j.at("variant").get<std::string>();
    ASSERT_TRUE(variant == "cased" || variant == "cased_strip_accents") << variant;
    const WordPieceTokenizer& t = variant == "cased" ? cased : stripped;
    const std::string text = j.at("text").get<std::string>();
    Encoding got;
    Encoding want;
    want.ids = j.at("ids").get<std::vector<int32_t>>();
    if (j.contains("pair")) {
      ++pairs;
      got = t.EncodePair(text, j.at("pair").get<std::string>(), j.at("max_len").get<int64_t>());
      want.token_type_ids = j.at("token_type_ids").get<std::vector<int32_t>>();
    } else {
      got = t.Encode(text, 128);
      want.token_type_ids = got.token_type_ids;
    }
    if (got.ids == want.ids && got.token_type_ids == want.token_type_ids) {
      ++matched;
    } else if (diffs.size() < 10) {
      diffs.push_back(absl::StrCat("line ", lines, " (", variant, ") ", j.at("text").dump(),
                                   ": want [", absl::StrJoin(want.ids, ", "), "] got [",
                                   absl::StrJoin(got.ids, ", "), "]"));
    }
  }
  EXPECT_EQ(lines, 52);
  EXPECT_EQ(pairs, 6);
  EXPECT_EQ(matched, lines) << absl::StrJoin(diffs, "\n");
  std::cout << "cased golden: " << matched << " / " << lines << " lines identical\n";
}

TEST(WordPieceCasedTest, CasedKeepsCaseAndAccentsAndStillSplitsCjk) {
  WordPieceOptions cased;
  cased.lowercase = false;
  EXPECT_EQ(WordPieceTokenizer::Normalize("Café ÅNGSTRÖM", cased), "Café ÅNGSTRÖM");
  EXPECT_EQ(WordPieceTokenizer::Normalize("e\xCC\x81", cased), "e\xCC\x81");  // no NFD, no NFC
  EXPECT_EQ(WordPieceTokenizer::Normalize("中文", cased), " 中  文 ");
  EXPECT_EQ(WordPieceTokenizer::Normalize("한국어", cased), "한국어");  // Hangul is not CJK here
  cased.split_chinese = false;
  EXPECT_EQ(WordPieceTokenizer::Normalize("中文", cased), "中文");
  cased.strip_accents = true;
  EXPECT_EQ(WordPieceTokenizer::Normalize("Café", cased), "Cafe");
  EXPECT_EQ(WordPieceTokenizer::Normalize("Café"), "cafe");  // the default: uncased
}

class ModelFolderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = JoinPath(
        ::testing::TempDir(),
        absl::StrCat("wp_", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    ASSERT_TRUE(RemoveTree(dir_).ok());  // no file of an earlier run in a reused temp folder
    ASSERT_TRUE(MakeDirs(dir_).ok());
    auto vocab = ReadFile(JoinPath(kCasedDir, "vocab.txt"));
    ASSERT_TRUE(vocab.ok());
    ASSERT_TRUE(WriteFileAtomically(JoinPath(dir_, "vocab.txt"), *vocab).ok());
  }
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(JoinPath(dir_, name), text).ok());
  }
  std::string dir_;
};

TEST_F(ModelFolderTest, TokenizerConfigSaysCased) {
  Write("tokenizer_config.json", R"({"do_lower_case": false, "strip_accents": null})");
  auto t = WordPieceTokenizer::FromModelFolder(dir_);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_FALSE(t->options().lowercase);
  EXPECT_FALSE(t->options().StripsAccents());
  EXPECT_EQ(t->Encode("Apple").ids, Load(Cased()).Encode("Apple").ids);
  EXPECT_NE(t->Encode("Apple").ids, Load({}).Encode("Apple").ids);
}

TEST_F(ModelFolderTest, TokenizerJsonAloneAndTheConfigWinsOverIt) {
  Write("tokenizer.json", R"({"normalizer": {"type": "BertNormalizer", "lowercase": false,
                               "strip_accents": true, "handle_chinese_chars": false}})");
  auto fast = WordPieceTokenizer::ModelOptions(dir_);
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_FALSE(fast->lowercase);
  EXPECT_TRUE(fast->StripsAccents());
  EXPECT_FALSE(fast->split_chinese);
  Write("tokenizer_config.json", R"({"do_lower_case": true, "tokenize_chinese_chars": true})");
  auto both = WordPieceTokenizer::ModelOptions(dir_);
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->lowercase);
  EXPECT_TRUE(both->StripsAccents());  // still tokenizer.json's
  EXPECT_TRUE(both->split_chinese);
}

TEST_F(ModelFolderTest, NeitherFileMeansUncased) {
  auto options = WordPieceTokenizer::ModelOptions(dir_);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_TRUE(options->lowercase);
  EXPECT_TRUE(options->StripsAccents());
  // bert-tiny-random (uncased, both files) stays uncased.
  auto tiny = WordPieceTokenizer::ModelOptions("data/bert-tiny-random");
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_TRUE(tiny->lowercase);
}

TEST_F(ModelFolderTest, MalformedSettingsNameTheFile) {
  Write("tokenizer_config.json", R"({"do_lower_case": "no"})");
  auto bad = WordPieceTokenizer::FromModelFolder(dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("tokenizer_config.json: do_lower_case must be true or false"));
  Write("tokenizer_config.json", "{not json");
  bad = WordPieceTokenizer::FromModelFolder(dir_);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("tokenizer_config.json: not a JSON object"));
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
