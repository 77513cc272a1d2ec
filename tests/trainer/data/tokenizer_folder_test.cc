// trainer/data/tokenizer_folder.h against Hugging Face: data/golden/families/family_goldens.json
// holds, for three folders laid out as the Hub's (a RoBERTa encoder under a cased WordPiece
// BertTokenizer as klue/roberta-base, XLM-R's SentencePiece, MPNet's WordPiece with <s> </s>),
// AutoTokenizer.from_pretrained(folder)(text[, pair], truncation=True, max_length=N)'s ids
// (transformers 5.17). Each folder is read three ways, which must all give those ids:
//   - as it is (tokenizer.json first);
//   - without tokenizer.json (vocab.txt or sentencepiece.bpe.model, tokenizer_config.json);
//   - with tokenizer.json alone (as transformers 5 saves folders).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "trainer/data/tokenizer_folder.h"

namespace tunefleet {
namespace trainer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const Json& Goldens() {
  static const Json* const kGoldens = [] {
    std::ifstream in("data/golden/families/family_goldens.json");
    return new Json(Json::parse(in));
  }();
  return *kGoldens;
}

std::string TempDir() {
  std::string base = (fs::temp_directory_path() / "tokenizer_folder_XXXXXX").string();
  EXPECT_NE(mkdtemp(base.data()), nullptr);
  return base;
}

// A copy of golden folder `name` with only the files `keep` says yes to.
template <typename Keep>
std::string CopyOf(const std::string& name, Keep keep) {
  const std::string dir = TempDir();
  for (const auto& entry : fs::directory_iterator("data/golden/families/" + name)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_regular_file() && keep(file)) fs::copy_file(entry.path(), dir + "/" + file);
  }
  return dir;
}

// Every golden line of `lines` encoded by the tokenizer of `dir`: the number that differ (the
// first few are printed). Fails the test when there is no line to compare.
int Mismatches(const std::string& dir, const Json& lines, const std::string& what) {
  auto tokenizer = LoadFolderTokenizer(dir);
  EXPECT_TRUE(tokenizer.ok()) << what << ": " << tokenizer.status();
  if (!tokenizer.ok()) return -1;
  EXPECT_GT(lines.size(), 20u) << what;
  int bad = 0;
  for (const Json& line : lines) {
    const std::string text = line.at("text");
    const int64_t max_len = line.at("max_len");
    const Encoding e =
        line.contains("pair")
            ? (*tokenizer)->EncodePair(text, line.at("pair").get<std::string>(), max_len)
            : (*tokenizer)->Encode(text, max_len);
    const auto want = line.at("ids").get<std::vector<int32_t>>();
    if (e.ids != want && ++bad <= 3) {
      ADD_FAILURE() << what << ": \"" << text.substr(0, 60) << "\" (max_len " << max_len
                    << ")\n  got  " << Json(e.ids).dump() << "\n  want " << Json(want).dump();
    }
  }
  return bad;
}

class FolderTokenizer : public ::testing::TestWithParam<std::string> {};

TEST_P(FolderTokenizer, AsSavedMatchesAutoTokenizer) {
  const Json& g = Goldens().at(GetParam());
  EXPECT_EQ(Mismatches("data/golden/families/" + GetParam(), g.at("ids"), GetParam()), 0);
}

TEST_P(FolderTokenizer, WithoutTokenizerJsonMatchesAutoTokenizer) {
  const Json& g = Goldens().at(GetParam());
  const std::string dir =
      CopyOf(GetParam(), [](const std::string& f) { return f != "tokenizer.json"; });
  EXPECT_EQ(
      Mismatches(dir, g.at("ids_without_tokenizer_json"), GetParam() + " (no tokenizer.json)"), 0);
  fs::remove_all(dir);
}

TEST_P(FolderTokenizer, TokenizerJsonAloneMatchesAutoTokenizer) {
  const Json& g = Goldens().at(GetParam());
  const std::string dir = CopyOf(GetParam(), [](const std::string& f) {
    return f == "tokenizer.json" || f == "tokenizer_config.json" || f == "config.json";
  });
  EXPECT_EQ(Mismatches(dir, g.at("ids"), GetParam() + " (tokenizer.json alone)"), 0);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Families, FolderTokenizer,
                         ::testing::Values("roberta-klue", "xlm-r", "mpnet", "distilbert"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) c = std::isalnum(c) ? c : '_';
                           return n;
                         });

// A BERT folder (bert-tiny-random: vocab.txt, tokenizer.json): tokenizers' BertWordPieceTokenizer
// (data/golden/tokens_sts_dev.jsonl).
TEST(FolderTokenizerBert, ReadsTheFolderAsTokenizersDoes) {
  auto t = LoadFolderTokenizer("data/bert-tiny-random");
  ASSERT_TRUE(t.ok()) << t.status();
  std::ifstream in("data/golden/tokens_sts_dev.jsonl");
  ASSERT_TRUE(in) << "data/golden/tokens_sts_dev.jsonl";
  int checked = 0;
  for (std::string line; std::getline(in, line) && checked < 40; ++checked) {
    const Json row = Json::parse(line);
    EXPECT_EQ((*t)->Encode(row.at("text").get<std::string>()).ids,
              row.at("ids").get<std::vector<int32_t>>())
        << row.at("text");
  }
  EXPECT_EQ(checked, 40);
  EXPECT_EQ((*t)->pad_id(), 0);
}

TEST(FolderTokenizerSpecials, PadAndTemplateFollowTheFolder) {
  auto klue = LoadFolderTokenizer("data/golden/families/roberta-klue");
  ASSERT_TRUE(klue.ok()) << klue.status();
  EXPECT_EQ((*klue)->pad_id(), 1);  // [CLS]=0 [PAD]=1 [SEP]=2 [UNK]=3, as klue's vocab
  const Encoding pair = (*klue)->EncodePair("a", "b", 0);
  EXPECT_EQ(pair.token_type_ids.back(), 1);  // a BertTokenizer's pair types
  auto mpnet = LoadFolderTokenizer("data/golden/families/mpnet");
  ASSERT_TRUE(mpnet.ok()) << mpnet.status();
  EXPECT_EQ((*mpnet)->pad_id(), 1);
  const Encoding m = (*mpnet)->EncodePair("a", "b", 0);
  EXPECT_EQ(m.ids.front(), 0);                              // <s>
  EXPECT_EQ(std::count(m.ids.begin(), m.ids.end(), 2), 3);  // </s> a </s></s> b </s>
  EXPECT_EQ(m.token_type_ids.back(), 0);
}

TEST(FolderTokenizerErrors, OneLineNamingTheFileAndKey) {
  const std::string dir = TempDir();
  std::ofstream(dir + "/tokenizer.json") << R"({"model": {"type": "BPE", "vocab": {}}})";
  auto t = LoadFolderTokenizer(dir);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find(dir + "/tokenizer.json"), std::string::npos) << t.status();
  EXPECT_NE(t.status().message().find("model.type"), std::string::npos) << t.status();
  EXPECT_EQ(t.status().message().find('\n'), std::string::npos);
  fs::remove(dir + "/tokenizer.json");
  auto none = LoadFolderTokenizer(dir);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("has no tokenizer"), std::string::npos) << none.status();
  std::ofstream(dir + "/tokenizer_config.json") << R"({"tokenizer_class": "RobertaTokenizer"})";
  auto bpe = LoadFolderTokenizer(dir);
  ASSERT_FALSE(bpe.ok());
  EXPECT_NE(bpe.status().message().find("tokenizer_class"), std::string::npos) << bpe.status();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainer
}  // namespace tunefleet
